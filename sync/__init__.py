"""Wire protocol, mock server and the client sync engine."""

__all__: list[str] = []
