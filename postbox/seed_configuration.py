"""SeedConfiguration: how an empty database and a newly seen peer start out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from postbox.chat_list import ChatListHole, PeerGroupId
from postbox.ids import MessageNamespace, PeerNamespace
from postbox.message import MessageTags

__all__ = ["DEFAULT_SEED_CONFIGURATION", "SeedConfiguration"]

_ALL_TAGS = frozenset(int(tag) for tag in MessageTags)


@dataclass(frozen=True, eq=False)
class SeedConfiguration:
    """As the seeds' ``SeedConfiguration``.

    ``message_holes``: for a peer namespace, the message namespaces whose whole id
    range starts as one hole, and the tags whose spaces get that hole too.
    ``chat_list_holes``: the groups whose chat list starts as one hole.
    ``chat_messages_namespaces``: the namespaces that count for a chat's top message.
    ``read_state_namespaces``: the namespaces whose incoming messages count as unread.
    ``local_namespaces``: namespaces whose ids postbox assigns itself.
    ``text_indexed_peer_namespaces``: peers whose messages go into the full-text index.
    """

    message_holes: Mapping[int, Mapping[int, frozenset[int]]]
    chat_list_holes: Mapping[int, ChatListHole] = field(default_factory=dict)
    chat_messages_namespaces: frozenset[int] = frozenset(
        {MessageNamespace.CLOUD, MessageNamespace.LOCAL}
    )
    read_state_namespaces: frozenset[int] = frozenset({MessageNamespace.CLOUD})
    local_namespaces: frozenset[int] = frozenset({MessageNamespace.LOCAL})
    text_indexed_peer_namespaces: frozenset[int] = frozenset(int(n) for n in PeerNamespace)

    def hole_tags(self, peer_namespace: int, namespace: int) -> frozenset[int]:
        return self.message_holes.get(peer_namespace, {}).get(namespace, frozenset())

    def hole_namespaces(self, peer_namespace: int) -> tuple[int, ...]:
        return tuple(sorted(self.message_holes.get(peer_namespace, {})))


#: Every kind of chat starts as one hole, secret chats too: the server this client talks
#: to keeps their history (on Telegram a secret chat exists only on its devices).
DEFAULT_SEED_CONFIGURATION = SeedConfiguration(
    message_holes={
        int(namespace): {int(MessageNamespace.CLOUD): _ALL_TAGS} for namespace in PeerNamespace
    },
    chat_list_holes={
        int(PeerGroupId.ROOT): ChatListHole.top(),
        int(PeerGroupId.ARCHIVE): ChatListHole.top(),
    },
)
