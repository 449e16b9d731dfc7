"""The app's wiring: account, typed data layer and CLI entry points."""

__all__: list[str] = []
