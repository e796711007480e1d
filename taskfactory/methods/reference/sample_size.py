# Reference answer of sample_size: margin {margin_points} percentage points, p = 0.5, z = 1.96.
import math

print("ANSWER:", math.ceil(1.96**2 * 0.25 / ({margin_points} / 100) ** 2))
