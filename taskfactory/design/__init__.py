"""Design: what a grid file names. The grid and its coordinates
(:mod:`.grid`), each family's scenarios (:mod:`.catalogue`), the
perturbations (:mod:`.perturb`) and the prompt styles (:mod:`.prompts`).

Imports only the package's root (the family contract and what families are
written with)."""
