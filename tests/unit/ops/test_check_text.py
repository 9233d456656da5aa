"""Pure parts of check's text (applier.ops.check): types shown with their character sets
and collations, the source's settings listed."""

from __future__ import annotations

from applier.ops.check import format_settings, type_text


def test_type_text_shows_charset_and_collation_of_text_columns_only():
    col = {"source_type": "varchar(5)", "source_charset": "latin1",
           "source_collation": "latin1_bin", "target_type": "varbinary(5)",
           "target_charset": "binary", "target_collation": "binary"}
    assert type_text(col, "source") == "varchar(5) latin1/latin1_bin"
    assert type_text(col, "target") == "varbinary(5)"
    assert type_text({"source_type": "int", "source_charset": None}, "source") == "int"


def test_format_settings_lists_every_setting_and_marks_unknown():
    line = format_settings({"flavor": "mysql", "version": "9.7.0", "log_bin": "ON",
                            "binlog_format": "ROW", "binlog_row_metadata": ""})
    assert line == "source: mysql 9.7.0; log_bin=ON binlog_format=ROW binlog_row_metadata=?"
