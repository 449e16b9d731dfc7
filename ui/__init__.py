"""PySide6 widgets and models bound to live Postbox views."""

__all__: list[str] = []
