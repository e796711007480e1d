"""Make: one dataset and its task. A coordinate's dataset drawn, released as
CSV and judged (:mod:`.task`, :mod:`.analysis`), with its reference solutions
(:mod:`.reference`), the script that regenerates it (:mod:`.script`) and the
record's columns (:mod:`.columns`); the probe that draws each scenario once
before a build (:mod:`.clipping`) and the set-up of the processes that make
tasks (:mod:`.workers`).

Imports the root and :mod:`taskfactory.design`."""
