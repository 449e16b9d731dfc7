"""PeerChatInterfaceStateTable: each chat's (and forum topic's) interface state, keyed
peer(8) thread(8), so a chat's topics sit beside it."""

from __future__ import annotations

from postbox.chat_interface_state import ChatInterfaceState
from postbox.ids import PeerId
from postbox.keys import decode_peer_thread_key, peer_thread_key
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["PeerChatInterfaceStateTable"]

_LOWER = b""
_UPPER = b"\xff" * 17


class PeerChatInterfaceStateTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "peer_chat_interface_state")

    def get(self, peer_id: PeerId, thread_id: int = 0) -> ChatInterfaceState | None:
        data = self._get(peer_thread_key(peer_id, thread_id))
        return None if data is None else ChatInterfaceState.decode(data)

    def set(self, peer_id: PeerId, thread_id: int, state: ChatInterfaceState | None) -> None:
        """Store ``state``; an empty one (or ``None``) removes the record."""
        key = peer_thread_key(peer_id, thread_id)
        if state is None or state.is_empty:
            if self._get(key) is not None:
                self._remove(key)
        else:
            data = state.encode()
            if self._get(key) != data:
                self._set(key, data)

    def all(self) -> dict[tuple[PeerId, int], ChatInterfaceState]:
        return {
            decode_peer_thread_key(key): ChatInterfaceState.decode(data)
            for key, data in self._range(_LOWER, _UPPER)
        }

    def updated(self) -> dict[tuple[PeerId, int], ChatInterfaceState | None]:
        """``(peer, thread) -> state`` (``None``: removed) for every record this
        transaction changed."""
        return {
            decode_peer_thread_key(key): None if after is None else ChatInterfaceState.decode(after)
            for key, _, after in self.changes()
        }
