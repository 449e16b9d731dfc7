"""Wire protocol (``sync.protocol``), mock server (``sync.server``) and the client's side
of the connection (``sync.connection``)."""

__all__: list[str] = []
