"""The daemon's status file is written at most every FLUSH_EVERY seconds while applying,
at once on a state change, and with what is pending at close (no server: pure logic)."""

from __future__ import annotations

import time

from applier.ops.service import read_status
from applier.ops.statusfile import StatusFile


def _wait(cond, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_many_updates_few_writes_and_the_last_one_reaches_the_file(tmp_path):
    sf = StatusFile(str(tmp_path), every=0.2)
    try:
        for n in range(1, 5001):
            sf.update({"state": "running", "transactions_applied": n})
        assert sf.writes < 100  # not one per update
        # the newest snapshot reaches the file without another update (the timer)
        _wait(lambda: (read_status(tmp_path) or {}).get("transactions_applied") == 5000)
    finally:
        sf.close()


def test_now_writes_before_returning_and_close_writes_what_is_pending(tmp_path):
    sf = StatusFile(str(tmp_path), every=3600)  # the timer never fires in this test
    sf.update({"state": "running", "transactions_applied": 0}, now=True)
    assert read_status(tmp_path) == {"state": "running", "transactions_applied": 0}
    sf.update({"state": "running", "transactions_applied": 7})
    assert read_status(tmp_path)["transactions_applied"] == 0  # pending
    sf.close()
    assert read_status(tmp_path)["transactions_applied"] == 7
    sf.update({"state": "stopped", "transactions_applied": 7})  # after close: at once
    assert read_status(tmp_path)["state"] == "stopped"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["status.json"]


def test_a_write_never_replaces_a_newer_snapshot(tmp_path):
    """The timer thread and `now` writes race; the file ends with the newest snapshot."""
    sf = StatusFile(str(tmp_path), every=0.001)
    try:
        for n in range(1, 2001):
            sf.update({"n": n}, now=n % 100 == 0)
            if n % 100 == 0:
                assert read_status(tmp_path)["n"] == n
    finally:
        sf.close()
    assert read_status(tmp_path)["n"] == 2000


def test_an_unwritable_state_dir_is_a_warning_not_a_failure(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    sf = StatusFile(str(blocker / "state"))
    sf.update({"state": "running"}, now=True)
    sf.close()
    assert "cannot write the status file" in caplog.text
