"""The guided tour's events on the demo's own server (``sync.server.stage``): each call
runs on the server's loop and returns a future, so the window never waits on it."""

from __future__ import annotations

from concurrent.futures import Future

from sync.server.server import EmbeddedServer

__all__ = ["DemoStage"]


class DemoStage:
    def __init__(self, server: EmbeddedServer) -> None:
        self._server = server

    def set_latency(self, seconds: float) -> Future[None]:
        """Slow motion's latency (0: off), set on the server's loop."""
        return self._server.submit(lambda mock: mock.set_latency(seconds))

    def quiet(self, on: bool) -> Future[None]:
        return self._server.submit(lambda mock: mock.stage.quiet(on))

    def writable(self, peer_ids: list[int]) -> Future[list[int]]:
        return self._server.submit(lambda mock: mock.stage.writable(peer_ids))

    def say(self, peer_id: int) -> Future[int | None]:
        return self._server.submit(lambda mock: mock.stage.say(peer_id))

    def read_elsewhere(self, peer_id: int) -> Future[bool]:
        return self._server.submit(lambda mock: mock.stage.read_elsewhere(peer_id))

    def drop_connections(self, peer_id: int, messages: int) -> Future[list[int]]:
        return self._server.submit(lambda mock: mock.stage.drop_connections(peer_id, messages))

    def too_long(self, peer_id: int, messages: int) -> Future[list[int]]:
        return self._server.submit(lambda mock: mock.stage.too_long(peer_id, messages))
