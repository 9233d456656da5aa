"""The target session as the apply logic meets it: its limits and how its errors become
ours (session.py), the executor every statement goes through, statements in flight, table
definitions read from information_schema, and what the target's own settings and objects
change (read_only, triggers, system versioning, foreign/unique checks)."""
