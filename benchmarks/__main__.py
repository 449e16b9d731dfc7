"""Run benchmarks: ``python -m benchmarks [NAME...] [--quick] [--list] [--keep DIR]
[--json FILE]``.

The tables go to standard output; ``--json FILE`` also writes every figure (name, value,
unit, note) per benchmark, for comparing runs by machine ("-" writes it to standard
output instead of the tables)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import pkgutil
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import benchmarks
from benchmarks.harness import BenchContext, get, print_table

_NOT_BENCHMARKS = frozenset({"harness", "__main__"})


def available() -> list[str]:
    """Names of the benchmark modules in this package (not imported)."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules(benchmarks.__path__)
        if info.name not in _NOT_BENCHMARKS and not info.name.startswith("_")
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the named benchmarks (all of them if none is named).",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmark to run")
    parser.add_argument("--quick", action="store_true", help="smaller workloads")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        type=Path,
        help="use DIR as scratch directory and keep it (default: a temporary directory)",
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="also write every figure as JSON to FILE ('-': standard output, no tables)",
    )
    return parser


def _run(names: list[str], quick: bool, scratch: Path, *, tables: bool = True) -> dict[str, Any]:
    """Run ``names``; every figure, by benchmark, as JSON-ready values."""
    results: dict[str, Any] = {}
    for name in names:
        module = importlib.import_module(f"{benchmarks.__name__}.{name}")
        bench = get(name)
        if bench is None:
            raise SystemExit(
                f"benchmarks: module {module.__name__} registers no benchmark {name!r}"
            )
        work = scratch / name
        work.mkdir(parents=True, exist_ok=True)
        figures = bench.run(BenchContext(quick=quick, scratch=work))
        results[name] = [dataclasses.asdict(figure) for figure in figures]
        if tables:
            print_table(f"{name}{' (quick)' if quick else ''}", figures)
            print()
    return results


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    names_available = available()

    if args.list:
        print("\n".join(names_available) if names_available else "no benchmarks")
        return 0

    requested: list[str] = args.names or names_available
    unknown = [n for n in requested if n not in names_available]
    if unknown:
        listing = ", ".join(names_available) if names_available else "none"
        print(
            f"benchmarks: unknown benchmark {', '.join(map(repr, unknown))}; available: {listing}",
            file=sys.stderr,
        )
        return 2
    if not requested:
        print("no benchmarks")
        return 0

    tables = args.json != "-"
    if args.keep is not None:
        keep: Path = args.keep
        keep.mkdir(parents=True, exist_ok=True)
        results = _run(requested, args.quick, keep, tables=tables)
    else:
        with tempfile.TemporaryDirectory(prefix="postbox-bench-") as tmp:
            results = _run(requested, args.quick, Path(tmp), tables=tables)
    if args.json is not None:
        document = json.dumps(
            {"quick": args.quick, "python": platform.python_version(), "benchmarks": results},
            indent=2,
        )
        if args.json == "-":
            print(document)
        else:
            Path(args.json).write_text(document + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
