"""What the demo's guided tour asks of the server, now rather than by chance.

Each is something Telegram's servers do on their own: a contact writes in a chat, the
account reads a chat on another device, the connection drops while messages go on
arriving, a difference is too long to send. The tour makes one happen and shows what
the client does about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sync.protocol import UpdatesTooLong

if TYPE_CHECKING:
    from sync.server.server import MockServer

__all__ = ["Stage"]


class Stage:
    """Events on the primary account of ``server``, run on the server's loop."""

    def __init__(self, server: MockServer) -> None:
        self._server = server

    @property
    def _account(self) -> int:
        return self._server.service.accounts.primary_id

    def quiet(self, on: bool) -> None:
        """Pause the live traffic (so each event stands out), or let it go on."""
        self._server.traffic_paused = on

    def writable(self, peer_ids: list[int]) -> list[int]:
        """Those of ``peer_ids`` someone can write in now (not a chat with another
        account, whose side the traffic never writes), in the order given."""
        traffic = self._server.service.traffic
        return [peer_id for peer_id in peer_ids if traffic.can_write_in(peer_id)]

    def say(self, peer_id: int) -> int | None:
        """Someone writes in ``peer_id``; the new message's id (``None``: nobody can)."""
        return self._server.service.say(peer_id)

    def read_elsewhere(self, peer_id: int) -> bool:
        """The account reads all of ``peer_id`` on a device that is not this one."""
        return self._server.service.read_elsewhere(peer_id)

    def drop_connections(self, peer_id: int, messages: int) -> list[int]:
        """Close the account's connections, and have ``messages`` messages written in
        ``peer_id`` before any device can come back: no push carries them, so a client
        learns of them only by asking for the difference since its pts."""
        self._server.close_account_connections(self._account, "the network dropped")
        said = (self._server.service.say(peer_id, push=False) for _ in range(messages))
        return [message_id for message_id in said if message_id is not None]

    def too_long(self, peer_id: int, messages: int) -> list[int]:
        """Store ``messages`` messages in ``peer_id`` without pushing them, then tell the
        account's devices ``updatesTooLong``, and answer "too long" to any getDifference
        from before now: what a server does when a device has fallen too far behind to
        be sent the updates one by one."""
        said = [self._server.service.say(peer_id, push=False) for _ in range(messages)]
        behind = self._server.service.store.state().pts
        for connection in self._server.account_connections(self._account):
            # Too long from any pts before now, so a retry from a few pts on is too.
            connection.session.faults.too_long_below = behind
            connection.push(UpdatesTooLong())
        self._server.changes.notify()
        return [message_id for message_id in said if message_id is not None]
