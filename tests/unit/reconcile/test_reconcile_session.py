"""reconcile.session without starting Spark: when a run's session is wanted at once, and
that it is not started before first use (tests/integration/test_reconcile_session_direct.py
checks the settings of a started one)."""

from __future__ import annotations

import pytest

from reconcile.session import LEAN, LazySpark, under_spark_submit


@pytest.fixture
def no_submit(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)


def test_spark_submit_is_recognised_by_its_gateway_port(monkeypatch, no_submit):
    assert under_spark_submit() is False
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert under_spark_submit() is True


def test_a_session_is_wanted_only_for_a_master_or_under_spark_submit(monkeypatch, no_submit):
    assert LazySpark(None, None).wanted is False
    assert LazySpark("spark://h:7077", None).wanted is True
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert LazySpark(None, "/j.jar").wanted is True


def test_nothing_starts_before_first_use(no_submit):
    lazy = LazySpark(None, "/j.jar")
    assert (lazy.started, lazy.distributed, lazy.master, lazy.jar) == (False, False, None,
                                                                         "/j.jar")
    assert lazy.started is False  # asking `distributed` of an unwanted session starts none


def test_the_lean_settings():
    assert LEAN == {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
                    "spark.sql.shuffle.partitions": "4",
                    "spark.sql.legacy.charVarcharAsString": "true"}
