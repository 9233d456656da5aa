"""DDL in one room: a source statement (a QUERY event) from its text to the target, and a
planned statement previewed before it is run.

* `statement.py`: `StatementApplier` applies one source statement: filtered on the tables
  it really acts on, kept or stopped by the policy, put in the target's names, made
  runnable on the target's flavour, executed in its source session; statement-based DML
  and unreadable DDL stop.
* `policy.py`: `DdlPolicy`, the replica's own column definitions kept (a statement that
  would redefine a column the replica defines differently stops); `alterspecs.py` reads
  what an ALTER TABLE does to columns.
* `flavor.py`: a definition written for one flavour made runnable on the other
  (`for_target_flavor`; the seed's --create uses it too).
* `target_names.py`: a statement put in the target's names (rewrite_db, [[tables]]).
* `sequences.py`: MariaDB's sequence DDL read as DDL on its sequences.
* `source_session.py`: the statement's source session (time zone, sql_mode, character
  set...) entered on the target and left.
* `planned.py` (pure) and `preview.py`: `applier check --ddl`, a planned ALTER TABLE tried
  on a scratch copy of its table (the command: applier.ops.ddlpreview).

Boundary: SQL text is read by applier.sql.lexer and applier.sql.statements (layer 2),
never here; this room executes through the target session it is given (applier.apply.target.session)
and knows nothing of rows events.
"""
