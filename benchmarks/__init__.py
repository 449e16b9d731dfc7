"""Benchmarks: ``python -m benchmarks [NAME...]``; ``benchmarks/<name>.py`` registers ``<name>``."""

from benchmarks.harness import (
    BenchContext,
    Figure,
    benchmark,
    percentile,
    print_table,
    timed,
)

__all__ = ["BenchContext", "Figure", "benchmark", "percentile", "print_table", "timed"]
