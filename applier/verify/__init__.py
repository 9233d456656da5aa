"""Continuous verification ([verify]): after each commit, off the apply path, the rows the
daemon applied are re-read from the target in batches by key and compared with what it
wrote (the after images as converted for the apply).

  compare.py    pure: value equality across driver types, the differing columns
  pending.py    pure: the newest expected image per key, due after settle_ms, bounded
  validator.py  the thread that reads the target and counts, logs and records divergences
"""
