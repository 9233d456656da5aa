"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def config(tmp_path):
    """A configuration whose servers are unreachable (ports 1 and 2), mode 600."""
    path = tmp_path / "applier.toml"
    path.write_text('[source]\nhost = "127.0.0.1"\nport = 1\n[target]\nhost = "127.0.0.1"\n'
                    f'port = 2\n[daemon]\nstate_dir = "{tmp_path / "state"}"\n')
    path.chmod(0o600)
    return path
