"""A sandbox folder holds one flavour: asking for the other is refused with the way out."""
from pathlib import Path

import pytest

from applier.sandbox.servers import SandboxError, ServerInfo, check_recorded_flavor


def _recorded(flavor: str) -> dict[str, ServerInfo]:
    return {role: ServerInfo(role=role, flavor=flavor, host="127.0.0.1", port=1, socket="s",
                             pid=1, datadir="d", error_log="e")
            for role in ("source", "target")}


def test_other_flavour_is_refused_naming_it_and_the_fix():
    with pytest.raises(SandboxError) as err:
        check_recorded_flavor(_recorded("mariadb"), "mysql", Path("/x/sandbox"))
    text = str(err.value)
    assert "holds a mariadb sandbox, not mysql" in text
    assert ".venv/bin/applier sandbox down --dir /x/sandbox --remove" in text


@pytest.mark.parametrize("recorded, flavor", [
    ({}, "mysql"), (_recorded("mysql"), "mysql"), (_recorded("mariadb"), None)])
def test_same_flavour_unset_or_empty_is_accepted(recorded, flavor):
    assert check_recorded_flavor(recorded, flavor, Path("/x")) is None
