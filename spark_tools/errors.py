"""Errors of the seed tools.

::

    SeedError               anything that stops a seed run, with a message a person can act on
    ├── JavaMissingError    no Java runtime for Spark
    └── OutputError         the output directory or file cannot be written
"""

from __future__ import annotations

__all__ = ["JavaMissingError", "OutputError", "SeedError"]


class SeedError(Exception):
    """A seed run that cannot go on."""


class JavaMissingError(SeedError):
    """Spark needs a Java runtime and none was found."""


class OutputError(SeedError):
    """The output cannot be written where it was asked for."""
