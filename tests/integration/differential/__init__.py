"""A randomized differential test: the same binlog events applied by the server's own
replica and by ours, outcomes and final rows compared (issue 36, item 2).

  columns.py   the column types a case draws from, each with its target variants
  cases.py     a seeded case: tables on both sides, type_conversions, the workload
  native.py    the server's own replica (CHANGE ... TO / START), repositioned per case
  runner.py    one case on real servers: tables, workload, both replicas, rows read
  compare.py   one case's outcomes and rows, differences classified (pure)
"""
