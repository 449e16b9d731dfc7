"""postbox: Telegram-style storage over SQLite, with change records for live views.

Storage is a set of tables with binary composite keys (``keys``), write-behind
caches and one ``Postbox`` thread that runs transactions and reports what each
one changed (``ChangeRecord``).
"""

from postbox.change_record import (
    ChangeRecord,
    ChatListOperation,
    ChatListOperationKind,
    InsertMessage,
    MessageHistoryOperation,
    OperationLogOperation,
    RemoveMessage,
    UpdateMessage,
)
from postbox.chat_list import ChatListHole, ChatListInclusion, ChatListIndex, PeerGroupId
from postbox.errors import (
    CorruptValueError,
    DatabaseError,
    DatabaseLockedError,
    InvalidArgumentError,
    InvalidSearchQueryError,
    NotADatabaseError,
    PostboxClosedError,
    PostboxError,
    ReadOnlyDatabaseError,
    SchemaVersionError,
    StorageFullError,
)
from postbox.holes import (
    ALL_MESSAGE_IDS,
    ClosedRange,
    HoleKey,
    HoleOperation,
    HoleOperationKind,
    MessageHistoryHoleSpace,
)
from postbox.ids import (
    MAX_MESSAGE_ID,
    MessageId,
    MessageIndex,
    MessageNamespace,
    PeerId,
    PeerNamespace,
)
from postbox.message import Media, MediaKind, Message, MessageFlags, MessageTags, StoreMessage
from postbox.operation_log import PeerOperationLogEntry
from postbox.peer import (
    CachedPeerData,
    Peer,
    PeerFlags,
    PeerNotificationSettings,
    PeerPresence,
    PresenceStatus,
)
from postbox.postbox import Postbox
from postbox.read_state import CombinedPeerReadState, PeerReadState
from postbox.seed_configuration import DEFAULT_SEED_CONFIGURATION, SeedConfiguration
from postbox.state import ChannelState, StateCursor
from postbox.tables import ChatListEntryKey
from postbox.tag_summary import MessageHistoryTagSummary, TagSummaryKey
from postbox.transaction import Transaction

__all__ = [
    "ALL_MESSAGE_IDS",
    "DEFAULT_SEED_CONFIGURATION",
    "MAX_MESSAGE_ID",
    "CachedPeerData",
    "ChangeRecord",
    "ChannelState",
    "ChatListEntryKey",
    "ChatListHole",
    "ChatListInclusion",
    "ChatListIndex",
    "ChatListOperation",
    "ChatListOperationKind",
    "ClosedRange",
    "CombinedPeerReadState",
    "CorruptValueError",
    "DatabaseError",
    "DatabaseLockedError",
    "HoleKey",
    "HoleOperation",
    "HoleOperationKind",
    "InsertMessage",
    "InvalidArgumentError",
    "InvalidSearchQueryError",
    "Media",
    "MediaKind",
    "Message",
    "MessageFlags",
    "MessageHistoryHoleSpace",
    "MessageHistoryOperation",
    "MessageHistoryTagSummary",
    "MessageId",
    "MessageIndex",
    "MessageNamespace",
    "MessageTags",
    "NotADatabaseError",
    "OperationLogOperation",
    "Peer",
    "PeerFlags",
    "PeerGroupId",
    "PeerId",
    "PeerNamespace",
    "PeerNotificationSettings",
    "PeerOperationLogEntry",
    "PeerPresence",
    "PeerReadState",
    "Postbox",
    "PostboxClosedError",
    "PostboxError",
    "PresenceStatus",
    "ReadOnlyDatabaseError",
    "RemoveMessage",
    "SchemaVersionError",
    "SeedConfiguration",
    "StateCursor",
    "StorageFullError",
    "StoreMessage",
    "TagSummaryKey",
    "Transaction",
    "UpdateMessage",
]
