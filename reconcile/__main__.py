"""`python -m reconcile run --config F` (also what spark-submit can run)."""

from reconcile.cli import main

main()
