"""Table map events: read from their bytes into the applier's model of a source table, and reused
while a table's map comes again unchanged."""
