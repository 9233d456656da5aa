"""The compiled part of the package: applier.binlog._rowc (row-image decoding in C).

optional: without a C compiler the package installs and runs on the pure-Python decoder
(applier/binlog/rowimage.py), which gives the same values, more slowly."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("applier.binlog._rowc", ["applier/binlog/_rowc.c"],
                             extra_compile_args=["-O2"], optional=True)])
