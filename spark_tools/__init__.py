"""PySpark dataset generation."""

__all__: list[str] = []
