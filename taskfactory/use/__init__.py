"""Use: what trainers and evaluators take from a corpus. Grading
(:mod:`.reward`, :mod:`.completions`, :mod:`.score`, :mod:`.frameworks`,
:mod:`.difficulty`), loading tasks (:mod:`.tasks`), showing one
(:mod:`.show`), exports for trainers (:mod:`.export`), the agent's sandboxed
environment and trajectories (:mod:`.agent`), the report (:mod:`.report`)
and the JSON Schemas of the files a user writes (:mod:`.schema`).

Imports the root, design, make and store; nothing imports it but the
command line and the package's lazy names."""
