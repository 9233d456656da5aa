"""The compiled parts of the package: applier.binlog.rows._rowc (row-image decoding),
applier.convert._rename (identical row images keyed by target names),
applier.sql._literals (SQL literals of statement arguments) and applier.binlog.wire._wirec
(binlog event packets split from the stream's buffer).

optional: without a C compiler the package installs and runs on their Python versions
(rowimage.py, mapping.py, literals.py, packets.py), which give the same results,
more slowly."""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("applier.binlog.rows._rowc", ["applier/binlog/rows/_rowc.c"],
              depends=["applier/binlog/rows/_rowc_values.h"],
              extra_compile_args=["-O2"], optional=True),
    Extension("applier.sql._literals", ["applier/sql/_literals.c"],
              extra_compile_args=["-O2"], optional=True),
    Extension("applier.convert._rename", ["applier/convert/_rename.c"],
              extra_compile_args=["-O2"], optional=True),
    Extension("applier.binlog.wire._wirec", ["applier/binlog/wire/_wirec.c"],
              extra_compile_args=["-O2"], optional=True),
])
