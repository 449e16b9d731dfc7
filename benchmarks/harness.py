"""A tiny benchmark framework: a registry, figures, a table printer and timing helpers.

A benchmark module ``benchmarks/<name>.py`` registers one benchmark called ``<name>``::

    from benchmarks.harness import BenchContext, Figure, benchmark, timed

    @benchmark("storage")
    def run(ctx: BenchContext) -> list[Figure]:
        with timed() as t:
            ...
        return [Figure("open", t.seconds * 1e3, "ms")]

A benchmark function takes either no argument or a single :class:`BenchContext`.
"""

from __future__ import annotations

import inspect
import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, TypeVar

__all__ = [
    "BenchContext",
    "Benchmark",
    "Figure",
    "Timer",
    "benchmark",
    "format_value",
    "get",
    "percentile",
    "print_table",
    "registered",
    "timed",
]


@dataclass(frozen=True)
class Figure:
    """One measured number: ``value`` in ``unit``, with an optional free-text note."""

    name: str
    value: float
    unit: str
    note: str = ""


@dataclass(frozen=True)
class BenchContext:
    """What a benchmark gets: the ``quick`` flag (smaller workloads) and a scratch directory."""

    quick: bool
    scratch: Path


F = TypeVar("F", bound=Callable[..., list[Figure]])


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark."""

    name: str
    func: Callable[..., list[Figure]]
    takes_context: bool

    def run(self, ctx: BenchContext) -> list[Figure]:
        figures = self.func(ctx) if self.takes_context else self.func()
        if not isinstance(figures, list) or not all(isinstance(f, Figure) for f in figures):
            raise TypeError(f"benchmark {self.name!r} must return list[Figure]")
        return figures


_REGISTRY: dict[str, Benchmark] = {}


def _takes_context(func: Callable[..., list[Figure]]) -> bool:
    params = [
        p
        for p in inspect.signature(func).parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(params) > 1:
        raise TypeError(f"{func.__qualname__}: a benchmark takes no argument or one BenchContext")
    return len(params) == 1


def benchmark(name: str) -> Callable[[F], F]:
    """Register the decorated function as benchmark ``name``; the function is returned as is."""

    def register(func: F) -> F:
        existing = _REGISTRY.get(name)
        if existing is not None and existing.func.__qualname__ != func.__qualname__:
            raise ValueError(f"benchmark {name!r} is already registered")
        _REGISTRY[name] = Benchmark(name, func, _takes_context(func))
        return func

    return register


def registered() -> dict[str, Benchmark]:
    """The benchmarks registered so far, by name."""
    return dict(_REGISTRY)


def get(name: str) -> Benchmark | None:
    """The benchmark registered as ``name``, if any."""
    return _REGISTRY.get(name)


_ONE_DECIMAL_UNITS = frozenset({"ns", "µs", "us", "ms", "%"})


def format_value(value: float, unit: str = "") -> str:
    """Format a figure's value: thousands separators, one decimal for time units and %."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if unit in _ONE_DECIMAL_UNITS:
        return f"{value:,.1f}"
    if float(value).is_integer():
        return f"{value:,.0f}"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.1f}"
    if magnitude >= 1:
        return f"{value:,.2f}"
    return f"{value:.3g}"


def print_table(title: str, figures: Iterable[Figure], file: TextIO | None = None) -> None:
    """Print ``figures`` as an aligned plain-text table under ``title``."""
    out = sys.stdout if file is None else file
    header = ("name", "value", "unit", "note")
    rows = [(f.name, format_value(f.value, f.unit), f.unit, f.note) for f in figures]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: tuple[str, str, str, str]) -> str:
        name, value, unit, note = row
        text = f"{name:<{widths[0]}}  {value:>{widths[1]}}  {unit:<{widths[2]}}  {note}"
        return text.rstrip()

    print(title, file=out)
    print(line(header), file=out)
    print("  ".join("-" * w for w in widths).rstrip(), file=out)
    for row in rows:
        print(line(row), file=out)
    if not rows:
        print("(no figures)", file=out)


class Timer:
    """Elapsed wall-clock time of a :func:`timed` block (``time.perf_counter``)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.end: float | None = None

    @property
    def seconds(self) -> float:
        """Seconds elapsed: final once the block has exited, running until then."""
        end = time.perf_counter() if self.end is None else self.end
        return end - self.start

    @property
    def ms(self) -> float:
        return self.seconds * 1e3

    @property
    def us(self) -> float:
        return self.seconds * 1e6


@contextmanager
def timed() -> Iterator[Timer]:
    """Time the ``with`` block: ``with timed() as t: ...`` then read ``t.seconds``."""
    timer = Timer()
    try:
        yield timer
    finally:
        timer.end = time.perf_counter()


def percentile(values: Iterable[float], p: float) -> float:
    """The ``p``-th percentile (0..100) of ``values``, linearly interpolated between ranks.

    Matches numpy's default (``method="linear"``): rank ``p / 100 * (n - 1)`` of the sorted values.
    """
    if not 0.0 <= p <= 100.0 or math.isnan(p):
        raise ValueError(f"percentile must be within [0, 100], got {p}")
    data = sorted(values)
    if not data:
        raise ValueError("percentile of an empty sequence")
    rank = p / 100.0 * (len(data) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(data) - 1)
    frac = rank - lo
    return data[lo] + (data[hi] - data[lo]) * frac
