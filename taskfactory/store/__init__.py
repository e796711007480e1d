"""Store: corpora on disk. The Parquet shards (:mod:`.shards`), a corpus's
layout, manifest, reading and writing (:mod:`.corpus`), its card
(:mod:`.card`); the build that plans (:mod:`.plan`, :mod:`.estimate`) and
writes one (:mod:`.build`), the import of real data (:mod:`.real`), and the
commands that copy (:mod:`.copying`) and re-split (:mod:`.resplit`) one.

Imports the root, :mod:`taskfactory.design` and :mod:`taskfactory.make`."""
