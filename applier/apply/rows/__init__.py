"""Row statements: a table's plan (keys, lookup, column set), the statement text, which row changes
go together into one set-based statement, and the writer that sends them."""
