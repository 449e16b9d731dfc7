"""MetadataTable: the state cursor, the transaction state version, the master client id
and one-time flags."""

from __future__ import annotations

from postbox.coding import stored_number
from postbox.keys import INT64
from postbox.state import StateCursor
from postbox.tables.table import Table
from postbox.value_box import ValueBox

__all__ = ["MetadataTable"]

_STATE = b"state"
_TRANSACTION_STATE_VERSION = b"transaction_state_version"
_CHAT_LIST_INITIALIZED = b"chat_list_initialized"
_MASTER_CLIENT_ID = b"master_client_id"


class MetadataTable(Table[bytes]):
    def __init__(self, box: ValueBox) -> None:
        super().__init__(box, "metadata")

    def state(self) -> StateCursor | None:
        data = self._get(_STATE)
        return None if data is None else StateCursor.decode(data)

    def set_state(self, state: StateCursor) -> None:
        self._set(_STATE, state.encode())

    def transaction_state_version(self) -> int:
        """Bumped by every non-empty commit, so other processes can tell something changed."""
        data = self._get(_TRANSACTION_STATE_VERSION)
        return 0 if data is None else stored_number(INT64, data, "transaction version")

    def stored_transaction_state_version(self) -> int:
        """The committed version, read past this transaction's cache."""
        data = self.box.get(self.spec, _TRANSACTION_STATE_VERSION)
        return 0 if data is None else stored_number(INT64, data, "transaction version")

    def assume_stored_transaction_state_version(self, version: int) -> None:
        """Take ``version`` as the committed version without reading it (the postbox knows
        it when no other process committed since its own last transaction)."""
        self._assume_stored(_TRANSACTION_STATE_VERSION, INT64.pack(version))

    def increment_transaction_state_version(self) -> int:
        version = self.transaction_state_version() + 1
        self._set(_TRANSACTION_STATE_VERSION, INT64.pack(version))
        return version

    def master_client_id(self) -> int | None:
        """The client id of the process that syncs this database (``MasterClientId``)."""
        data = self._get(_MASTER_CLIENT_ID)
        return None if data is None else stored_number(INT64, data, "master client id")

    def set_master_client_id(self, client_id: int | None) -> None:
        if client_id is None:
            self._remove(_MASTER_CLIENT_ID)
        else:
            self._set(_MASTER_CLIENT_ID, INT64.pack(client_id))

    def is_chat_list_initialized(self) -> bool:
        return self._get(_CHAT_LIST_INITIALIZED) is not None

    def set_chat_list_initialized(self) -> None:
        self._set(_CHAT_LIST_INITIALIZED, b"\x01")
