"""The failed messages of one chat (the seeds' ``FailedMessageIdsView``), with why each
failed, so a history can say so on each bubble and offer to send them again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from postbox.ids import MessageId, PeerId
from postbox.message_failure import MessageFailure
from postbox.view_keys import FailedMessageIdsViewKey
from postbox.views import topics
from postbox.views.reloading_view import ReloadingView
from postbox.views.view import ViewSnapshot

if TYPE_CHECKING:
    from postbox.transaction import Transaction

__all__ = ["FailedMessageIdsView", "MutableFailedMessageIdsView"]


@dataclass(frozen=True, slots=True)
class FailedMessageIdsView(ViewSnapshot):
    """A chat's failed messages and their failures."""

    peer_id: PeerId
    failures: Mapping[MessageId, MessageFailure]

    @property
    def ids(self) -> tuple[MessageId, ...]:
        """The failed messages in id order."""
        return tuple(sorted(self.failures))


class MutableFailedMessageIdsView(ReloadingView[FailedMessageIdsView]):
    """Reloads the chat's few failures when a commit changed one of them."""

    def __init__(self, key: FailedMessageIdsViewKey, tx: Transaction) -> None:
        self.key = key
        self.watched = frozenset({topics.failed_messages(key.peer_id)})
        super().__init__(tx)

    def load(self, tx: Transaction) -> FailedMessageIdsView:
        failures = dict(tx.get_failed_messages(self.key.peer_id))
        return FailedMessageIdsView(self.key.peer_id, MappingProxyType(failures))
