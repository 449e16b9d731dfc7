"""The accumulator between the server's answers and one Postbox transaction.

``AccountMutableState`` starts from what Postbox holds (the cursor and channel pts
read in phase one), takes updates and difference results, and records what they mean
as an ordered list of mutation operations (phase two). ``optimized`` folds that list
(an add followed by an edit becomes one add; an add followed by a delete, a delete of
any copy stored before), and
``sync.engine.replay`` applies it in one transaction (phase three). Channels work on a
``branch`` whose new operations are ``merge``d back, as in the seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from postbox import Peer as StoredPeer
from postbox import (
    PeerId,
    PeerPresence,
    PeerReadState,
    StateCursor,
    StoreMessage,
    SynchronizeableDraft,
)
from sync.engine.convert import (
    draft_from_wire,
    message_from_wire,
    peer_from_wire,
    presence_from_wire,
    read_state_from_dialog,
)
from sync.protocol import (
    AnyUpdate,
    Dialog,
    Message,
    Peer,
    PeerKind,
    Presence,
    UpdateChannel,
    UpdateChannelTooLong,
    UpdateContact,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateDraftMessage,
    UpdateEditChannelMessage,
    UpdateEditMessage,
    UpdateNewChannelMessage,
    UpdateNewEncryptedMessage,
    UpdateNewMessage,
    UpdateNotifySettings,
    UpdatePeer,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    UpdateReadHistoryOutbox,
    UpdateUserStatus,
    peer_kind,
)
from sync.state import referenced_peers

__all__ = [
    "AccountMutableState",
    "AddMessages",
    "ChannelCaughtUp",
    "DeleteMessages",
    "EditMessage",
    "ForgetChannel",
    "MergePeers",
    "MergePresences",
    "Operation",
    "PollChannel",
    "ReadInbox",
    "SetContact",
    "SetDraft",
    "SetMuted",
    "ReadOutbox",
    "ResetChannel",
    "ResetHistories",
    "UpdateChannelState",
    "optimized",
]


@dataclass(frozen=True, slots=True)
class AddMessages:
    """Store messages. ``upper_block``: they are the newest of their chats, so the
    hole above them (if the chat was never loaded) ends below the lowest one."""

    messages: tuple[StoreMessage, ...]
    upper_block: bool = True


@dataclass(frozen=True, slots=True)
class EditMessage:
    message: StoreMessage


@dataclass(frozen=True, slots=True)
class DeleteMessages:
    """Delete messages. ``added_in_batch``: the same batch added them (and ``optimized``
    dropped that add), so only a copy stored before by another path (a send's answer)
    can remain: it goes, and nothing else about them needs checking."""

    peer_id: PeerId
    ids: tuple[int, ...]
    added_in_batch: bool = False


@dataclass(frozen=True, slots=True)
class ReadInbox:
    """A read of incoming messages; ``still_unread`` is the server's count after it,
    ``None`` where it cannot be placed in order (a difference gives new messages and
    other updates apart): then the count is estimated and the server asked again."""

    peer_id: PeerId
    max_id: int
    still_unread: int | None = None


@dataclass(frozen=True, slots=True)
class ReadOutbox:
    peer_id: PeerId
    max_id: int


@dataclass(frozen=True, slots=True)
class SetMuted:
    """The account muted a chat until ``muted_until`` (0: unmuted), on some device."""

    peer_id: PeerId
    muted_until: int


@dataclass(frozen=True, slots=True)
class SetContact:
    """The account added a user to its contacts (or removed one), on some device."""

    peer_id: PeerId
    contact: bool


@dataclass(frozen=True, slots=True)
class SetDraft:
    """The account saved a chat's draft (``None``: cleared), on some device."""

    peer_id: PeerId
    draft: SynchronizeableDraft | None


@dataclass(frozen=True, slots=True)
class MergePeers:
    """Store ``peers``; ``only_new``: only those not stored yet (the peers of a push
    older than the stored state, whose newer names a difference since has given)."""

    peers: tuple[StoredPeer, ...]
    only_new: bool = False


@dataclass(frozen=True, slots=True)
class MergePresences:
    presences: tuple[tuple[PeerId, PeerPresence], ...]


@dataclass(frozen=True, slots=True)
class UpdateChannelState:
    peer_id: PeerId
    pts: int


@dataclass(frozen=True, slots=True)
class ResetChannel:
    """Channel too long: keep the newest messages, make the rest of the history a hole,
    take the server's read state and pts."""

    peer_id: PeerId
    messages: tuple[StoreMessage, ...]
    read_state: PeerReadState
    pts: int


@dataclass(frozen=True, slots=True)
class PollChannel:
    """Remember to fetch the channel's own difference: ``pts`` is the pts the server
    said it reached (0: not said). ``always``: whatever the channel's stored pts (a
    ``channelTooLong``, a channel never synced); otherwise only if it differs."""

    peer_id: PeerId
    pts: int
    always: bool = True


@dataclass(frozen=True, slots=True)
class ChannelCaughtUp:
    """The channel's own difference was fetched to its end: nothing left to poll."""

    peer_id: PeerId


@dataclass(frozen=True, slots=True)
class ForgetChannel:
    """The server refuses a channel for good (the account was removed from it): it
    leaves the chat list with everything stored of it, and is not asked about again."""

    peer_id: PeerId


@dataclass(frozen=True, slots=True)
class ResetHistories:
    """Difference too long: every known history and the chat list become holes again
    (their stored messages stay), to be filled from the server on demand."""


Operation = (
    AddMessages
    | EditMessage
    | DeleteMessages
    | ReadInbox
    | ReadOutbox
    | SetMuted
    | SetDraft
    | SetContact
    | MergePeers
    | MergePresences
    | UpdateChannelState
    | ResetChannel
    | ResetHistories
    | PollChannel
    | ChannelCaughtUp
    | ForgetChannel
)


@dataclass(slots=True)
class AccountMutableState:
    """Phase two's state: the cursor and channel pts as they advance, and the operations.

    ``initial_cursor`` is what Postbox held when phase one read it; replay refuses to
    apply the operations if the stored cursor has moved since.
    """

    initial_cursor: StateCursor | None
    cursor: StateCursor
    channel_pts: dict[PeerId, int] = field(default_factory=dict)
    operations: list[Operation] = field(default_factory=list)
    branch_index: int = 0
    #: Channels whose updates showed a gap: getChannelDifference after this state.
    channels_to_poll: set[PeerId] = field(default_factory=set)
    #: Peers the stored messages name (chats, authors, forward sources): each must be
    #: stored, carried by the answer, or described by ``getPeers`` before the replay.
    references: set[int] = field(default_factory=set)

    def branch(self) -> AccountMutableState:
        """A copy to work on separately; ``merge`` takes back only what it adds."""
        return AccountMutableState(
            self.initial_cursor,
            self.cursor,
            dict(self.channel_pts),
            list(self.operations),
            len(self.operations),
            set(self.channels_to_poll),
            set(self.references),
        )

    def merge(self, other: AccountMutableState) -> None:
        self.operations.extend(other.operations[other.branch_index :])
        self.channel_pts.update(other.channel_pts)
        self.channels_to_poll |= other.channels_to_poll
        self.references |= other.references

    # -- recording -------------------------------------------------------------------

    def merge_peers(self, peers: Iterable[Peer], *, only_new: bool = False) -> None:
        stored = tuple(peer_from_wire(peer) for peer in peers)
        if stored:
            self.operations.append(MergePeers(stored, only_new))

    def merge_presences(self, presences: Iterable[Presence]) -> None:
        stored = tuple(presence_from_wire(presence) for presence in presences)
        if stored:
            self.operations.append(MergePresences(stored))

    def add_messages(self, messages: Sequence[Message], *, upper_block: bool = True) -> None:
        if messages:
            stored = tuple(message_from_wire(message) for message in messages)
            self.operations.append(AddMessages(stored, upper_block))
            self.references |= referenced_peers(messages)

    def set_channel_pts(self, channel: PeerId, pts: int) -> None:
        self.channel_pts[channel] = pts
        self.operations.append(UpdateChannelState(channel, pts))

    def reset_channel(self, dialog: Dialog, messages: Sequence[Message]) -> None:
        channel = PeerId(dialog.peer)
        stored = tuple(message_from_wire(message) for message in messages)
        self.references |= referenced_peers(messages)
        read_state = read_state_from_dialog(dialog)
        self.operations.append(ResetChannel(channel, stored, read_state, dialog.pts or 0))
        self.channel_pts[channel] = dialog.pts or 0

    def poll_channel(self, channel: PeerId, pts: int = 0, *, always: bool = True) -> None:
        """Fetch the channel's difference after this state, and store that it is to be
        fetched with this state (see ``PollChannel``)."""
        if always:
            self.channels_to_poll.add(channel)
        self.operations.append(PollChannel(channel, pts, always))

    def channel_caught_up(self, channel: PeerId) -> None:
        self.operations.append(ChannelCaughtUp(channel))

    def reset_histories(self) -> None:
        self.operations.append(ResetHistories())

    def forget_channel(self, channel: PeerId) -> None:
        self.operations.append(ForgetChannel(channel))

    def add_difference(self, messages: Sequence[Message], updates: Sequence[AnyUpdate]) -> None:
        """A difference's new messages and other updates, which come apart: a read in a
        chat that also has new messages cannot be placed among them."""
        self.add_messages(messages)
        chats = {message.peer for message in messages}
        for update in updates:
            peer = getattr(update, "peer", getattr(update, "channel", None))
            self.apply(update, in_order=peer not in chats)

    def apply(self, update: AnyUpdate, *, in_order: bool = True) -> None:
        """Record what ``update`` means; its counters were checked by the caller.

        ``in_order``: the update comes in pts order with the messages around it (a
        push), not apart from them (a difference's other updates).
        """
        match update:
            case UpdateNewMessage() | UpdateNewChannelMessage() | UpdateNewEncryptedMessage():
                self.add_messages((update.message,))
            case UpdateEditMessage() | UpdateEditChannelMessage():
                self.operations.append(EditMessage(message_from_wire(update.message)))
                self.references |= referenced_peers((update.message,))
            case UpdateDeleteMessages():
                self.operations.append(DeleteMessages(PeerId(update.peer), update.ids))
            case UpdateDeleteChannelMessages():
                self.operations.append(DeleteMessages(PeerId(update.channel), update.ids))
            case UpdateReadHistoryInbox():
                # A secret chat's messages come by the qts and its reads by the pts: a
                # read cannot be placed among them, so its count may leave out (or
                # count again) messages stored here; estimated, and the server asked.
                placed = in_order and peer_kind(update.peer) is not PeerKind.SECRET
                still_unread = update.still_unread_count if placed else None
                self.operations.append(ReadInbox(PeerId(update.peer), update.max_id, still_unread))
            case UpdateReadChannelInbox():
                still_unread = update.still_unread_count if in_order else None
                self.operations.append(
                    ReadInbox(PeerId(update.channel), update.max_id, still_unread)
                )
            case UpdateReadHistoryOutbox():
                self.operations.append(ReadOutbox(PeerId(update.peer), update.max_id))
            case UpdateNotifySettings():
                self.operations.append(SetMuted(PeerId(update.peer), update.muted_until))
            case UpdateDraftMessage():
                self.operations.append(SetDraft(PeerId(update.peer), draft_from_wire(update.draft)))
            case UpdateContact():
                self.operations.append(SetContact(PeerId(update.peer), update.contact))
            case UpdateUserStatus():
                self.merge_presences((update.presence,))
            case UpdatePeer():
                self.merge_peers((update.peer,))
            case UpdateChannelTooLong():
                self.poll_channel(PeerId(update.channel), update.pts or 0)
            case UpdateChannel():
                self.poll_channel(PeerId(update.channel))
            case _:
                assert_never(update)


def optimized(operations: Sequence[Operation]) -> list[Operation]:
    """The same effect in fewer operations: adds merged, an edit of a message added in
    the same batch folded into the add, a delete of one dropped from it."""
    result: list[Operation] = []
    pending: dict[tuple[int, int], StoreMessage] = {}
    order: list[tuple[int, int]] = []

    def flush() -> None:
        if order:
            kept = tuple(pending[key] for key in order if key in pending)
            if kept:
                result.append(AddMessages(kept))
            pending.clear()
            order.clear()

    for operation in operations:
        if isinstance(operation, AddMessages) and operation.upper_block:
            for message in operation.messages:
                key = (int(message.peer_id), message.id or 0)
                if key not in pending:
                    order.append(key)
                pending[key] = message
            continue
        if isinstance(operation, EditMessage):
            key = (int(operation.message.peer_id), operation.message.id or 0)
            if key in pending:
                pending[key] = operation.message
                continue
        if isinstance(operation, DeleteMessages):
            keys = [(int(operation.peer_id), message_id) for message_id in operation.ids]
            folded = [key for key in keys if key in pending]
            for key in folded:
                del pending[key]
            if folded:
                # Stored already by another path (a send's answer)? Then it must go too.
                dropped = tuple(key[1] for key in folded)
                result.append(DeleteMessages(operation.peer_id, dropped, added_in_batch=True))
                if len(folded) == len(keys):
                    continue
                remaining = tuple(k[1] for k in keys if k not in folded)
                operation = replace(operation, ids=remaining)
        flush()
        result.append(operation)
    flush()
    return result


def describe(operation: Operation) -> dict[str, Any]:
    """A short, loggable description of an operation."""
    name = type(operation).__name__
    if isinstance(operation, AddMessages):
        return {"op": name, "messages": len(operation.messages)}
    if isinstance(operation, DeleteMessages):
        return {"op": name, "peer": int(operation.peer_id), "ids": len(operation.ids)}
    return {"op": name}
