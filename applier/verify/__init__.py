"""Continuous verification ([verify]): after each commit, off the apply path, the rows the
daemon applied are re-read from the target in batches by key and compared with what it
wrote (the after images as converted for the apply).

  intake.py     the applying thread's part (a list entry per group, a journal line and a
                hand-over per committed group) and the validator's inbox
  process.py    the daemon's side of the validator process (pipe, status, stop, end)
  child.py      the validator process (python -m applier.verify.child)
  frames.py     the pipe's frames
  validator.py  the threads that read the target and count, log and record divergences
  journal.py    the pending checks on disk (kill -9 loses none)
  compare.py    pure: value equality across driver types, the differing columns
  pending.py    pure: the newest expected image per key, due after settle_ms, bounded;
                sampled when full
  record.py     the divergence table
  wiring.py     the validator process for the daemon, its saved counts and metrics
"""
