"""Transaction grouping: one source transaction (or a commit group of them) applied as one target
transaction with its checkpoint; group commit, merged row changes, parallel apply by writesets,
kept source GTIDs."""
