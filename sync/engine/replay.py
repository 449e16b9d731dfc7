"""Phase three: apply a final state's operations to Postbox in one transaction.

``replay_final_state`` first checks that the stored cursor (and each touched channel's
pts) is still the one phase one read; if another writer moved it, it applies nothing
and returns ``False`` so the caller starts over. Otherwise it applies the optimized
operations and moves the cursor, all in the caller's transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import assert_never

from postbox import (
    MAX_MESSAGE_ID,
    ChannelState,
    ChatInterfaceState,
    ChatListHole,
    ChatListInclusion,
    MessageHistoryHoleSpace,
    MessageId,
    PeerGroupId,
    PeerId,
    PeerNotificationSettings,
    StoreMessage,
    SynchronizeableDraft,
    Transaction,
)
from sync.engine.channel_access import forget_channel, inaccessible_channels
from sync.engine.convert import CLOUD, synced_part
from sync.engine.log_tags import DRAFT_TAG, SETTINGS_TAG
from sync.engine.mutable_state import (
    AccountMutableState,
    AddMessages,
    ChannelCaughtUp,
    DeleteMessages,
    EditMessage,
    ForgetChannel,
    MergePeers,
    MergePresences,
    Operation,
    PollChannel,
    ReadInbox,
    ReadOutbox,
    ResetChannel,
    ResetHistories,
    SetContact,
    SetDraft,
    SetMuted,
    UpdateChannelState,
    optimized,
)
from sync.engine.read_states import request_validation, validate_after_deletion
from sync.engine.tag_summaries import validate_all_summaries, validate_summaries_after_deletion

__all__ = [
    "ensure_listed",
    "replace_range",
    "replay_final_state",
    "set_draft_from_server",
    "set_muted_from_server",
]

_EVERYWHERE = MessageHistoryHoleSpace.everywhere()


def replay_final_state(
    tx: Transaction, state: AccountMutableState, initial_channel_pts: dict[PeerId, int]
) -> bool:
    """Apply ``state`` if Postbox still holds the cursor it started from."""
    if tx.get_state() != state.initial_cursor:
        return False
    for channel, pts in initial_channel_pts.items():
        stored = tx.get_peer_chat_state(channel)
        if (stored.pts if stored else 0) != pts:
            return False
    validating: set[PeerId] = set()
    for operation in optimized(state.operations):
        apply_operation(tx, operation, validating)
    tx.set_state(state.cursor)
    return True


def ensure_listed(tx: Transaction, peer_ids: Iterable[PeerId]) -> None:
    """List chats the chat list has never seen (in the main list, unpinned), and ask
    the server for what a message does not say of them: read state, folder, mute."""
    for peer_id in peer_ids:
        if tx.get_chat_list_inclusion(peer_id) is None:
            tx.update_chat_list_inclusion(peer_id, ChatListInclusion(PeerGroupId.ROOT))
            request_validation(tx, peer_id)


def replace_range(
    tx: Transaction,
    peer_id: PeerId,
    lower: int,
    upper: int,
    messages: Iterable[StoreMessage],
    *,
    skip: set[int] | frozenset[int] = frozenset(),
) -> None:
    """Make ids ``lower..upper`` of a chat's cloud history the server's answer for that
    range: store new messages, update changed ones, delete what the server no longer
    has, and remove the hole over the range.

    ``skip``: ids added, edited or deleted by updates since the answer was asked for;
    they are left as they are.
    """
    fresh = {message.id or 0: message for message in messages if message.id not in skip}
    stored = {
        index.id.id for index in tx.get_message_indices_in_id_range(peer_id, CLOUD, lower, upper)
    }
    stale = [
        MessageId(peer_id, CLOUD, id_) for id_ in stored if id_ not in fresh and id_ not in skip
    ]
    if stale:
        # Deleted on the server while this client missed it: whether its unread count
        # already went down for them (a validation since) cannot be told, so it is asked.
        if tx.get_read_state(peer_id) is not None:
            request_validation(tx, peer_id)
        tx.delete_messages(stale)
    for id_, message in fresh.items():
        if id_ in stored:
            tx.update_message(MessageId(peer_id, CLOUD, id_), message)
    new = [message for id_, message in fresh.items() if id_ not in stored]
    if new:
        ensure_listed(tx, (peer_id,))
        tx.add_messages(new)
    tx.remove_hole(peer_id, CLOUD, _EVERYWHERE, lower, upper)
    # A skipped id that is not stored may be history this answer had and nothing else
    # brought (a send answered after the cursor passed it): it stays a hole, to ask again.
    for id_ in skip:
        if lower <= id_ <= upper and not tx.message_exists(MessageId(peer_id, CLOUD, id_)):
            tx.add_hole(peer_id, CLOUD, _EVERYWHERE, id_, id_)


def apply_operation(
    tx: Transaction, operation: Operation, validating: set[PeerId] | None = None
) -> None:
    """Apply one operation; ``validating``: the chats this transaction has queued for
    read-state validation (a queued chat stays queued until the transaction ends)."""
    if validating is None:
        validating = set()
    match operation:
        case AddMessages():
            _add_messages(tx, operation)
        case EditMessage(message=message):
            message_id = MessageId(message.peer_id, CLOUD, message.id or 0)
            if tx.message_exists(message_id):
                tx.update_message(message_id, message)
            else:
                ensure_listed(tx, (message.peer_id,))
                tx.add_messages([message])
        case DeleteMessages():
            _delete_messages(tx, operation, validating)
        case ReadInbox(peer_id=peer_id):
            # A read of a chat never loaded (no read state yet) says only part of it.
            unknown = tx.get_read_state(peer_id) is None
            tx.apply_incoming_read_max_id(
                MessageId(peer_id, CLOUD, operation.max_id),
                unread_count=operation.still_unread,
            )
            if operation.still_unread is None or unknown:
                _request_validation(tx, peer_id, validating)
        case ReadOutbox(peer_id=peer_id):
            unknown = tx.get_read_state(peer_id) is None
            tx.apply_outgoing_read_max_id(MessageId(peer_id, CLOUD, operation.max_id))
            if unknown:
                _request_validation(tx, peer_id, validating)
        case SetMuted(peer_id=peer_id):
            set_muted_from_server(tx, peer_id, operation.muted_until)
        case SetDraft(peer_id=peer_id):
            set_draft_from_server(tx, peer_id, operation.draft)
        case SetContact(peer_id=peer_id):
            contacts = tx.get_contact_peer_ids()
            if operation.contact != (peer_id in contacts):
                changed = contacts | {peer_id} if operation.contact else contacts - {peer_id}
                tx.replace_contact_peer_ids(changed)
        case MergePeers(peers=peers, only_new=True):
            tx.update_peers(peer for peer in peers if tx.get_peer(peer.id) is None)
        case MergePeers(peers=peers):
            tx.update_peers(peers)
        case MergePresences():
            tx.update_peer_presences(dict(operation.presences))
        case UpdateChannelState():
            tx.set_peer_chat_state(operation.peer_id, ChannelState(operation.pts))
        case ResetChannel():
            _reset_channel(tx, operation)
        case ResetHistories():
            _reset_histories(tx)
        case PollChannel(peer_id=peer_id, pts=pts):
            stored = tx.get_peer_chat_state(peer_id)
            if operation.always or stored is None or stored.pts != pts:
                tx.add_channel_to_poll(peer_id, pts)
        case ChannelCaughtUp(peer_id=peer_id):
            tx.remove_channel_to_poll(peer_id)
        case ForgetChannel(peer_id=peer_id):
            replace_range(tx, peer_id, 1, MAX_MESSAGE_ID, [])
            forget_channel(tx, peer_id)
            tx.remove_channel_to_poll(peer_id)
        case _:
            assert_never(operation)


def set_muted_from_server(tx: Transaction, peer_id: PeerId, muted_until: int) -> None:
    """Take the server's mute of a chat, unless one made here waits to be sent: that one
    reaches the server later, so it is the one that stands."""
    if tx.get_operation_log_entries(peer_id, SETTINGS_TAG):
        return
    settings = tx.get_notification_settings(peer_id) or PeerNotificationSettings()
    if settings.muted_until != muted_until:
        tx.update_notification_settings(
            peer_id, dataclasses.replace(settings, muted_until=muted_until)
        )


def set_draft_from_server(
    tx: Transaction, peer_id: PeerId, draft: SynchronizeableDraft | None
) -> None:
    """Take the server's draft of a chat, unless one saved here waits to be sent (that
    one stands, as with a mute) or it is what the server keeps of the one here (a draft
    too long for a message stays whole). The rest of the chat's interface state stays."""
    if tx.get_operation_log_entries(peer_id, DRAFT_TAG):
        return
    state = tx.get_chat_interface_state(peer_id) or ChatInterfaceState()
    if synced_part(state.draft) != synced_part(draft):
        tx.set_chat_interface_state(peer_id, dataclasses.replace(state, draft=draft))


def _delete_messages(tx: Transaction, operation: DeleteMessages, validating: set[PeerId]) -> None:
    peer_id = operation.peer_id
    if operation.added_in_batch:
        stored = [
            MessageId(peer_id, CLOUD, i)
            for i in operation.ids
            if tx.message_exists(MessageId(peer_id, CLOUD, i))
        ]
        if stored:
            stored_ids = tuple(m.id for m in stored)
            apply_operation(tx, DeleteMessages(peer_id, stored_ids), validating)
        return
    validate_after_deletion(tx, peer_id, operation.ids)
    validate_summaries_after_deletion(tx, peer_id, operation.ids)
    top = tx.get_messages(peer_id, CLOUD, limit=1, newest_first=True)
    if top and top[0].id.id in operation.ids and tx.get_chat_list_inclusion(peer_id):
        # The chat's last message goes: the one before it may be in a hole, and the
        # chat list would show an older one. The server says which it is.
        _request_validation(tx, peer_id, validating)
    tx.delete_messages(MessageId(peer_id, CLOUD, i) for i in operation.ids)


def _request_validation(tx: Transaction, peer_id: PeerId, validating: set[PeerId]) -> None:
    if peer_id not in validating:
        validating.add(peer_id)
        request_validation(tx, peer_id)


def _add_messages(tx: Transaction, operation: AddMessages) -> None:
    lowest: dict[PeerId, int] = {}
    for message in operation.messages:
        id_ = message.id or 0
        if message.peer_id not in lowest or id_ < lowest[message.peer_id]:
            lowest[message.peer_id] = id_
    ensure_listed(tx, lowest)
    tx.add_messages(operation.messages)
    if operation.upper_block:
        # Everything above the newest messages' lowest id is known: later ones come as
        # updates too. A chat never loaded keeps the hole below.
        for peer_id, lowest_id in lowest.items():
            tx.remove_hole(peer_id, CLOUD, _EVERYWHERE, lowest_id, MAX_MESSAGE_ID)


def _reset_channel(tx: Transaction, operation: ResetChannel) -> None:
    peer_id = operation.peer_id
    ensure_listed(tx, (peer_id,))
    tx.add_hole(peer_id, CLOUD, _EVERYWHERE, 1, MAX_MESSAGE_ID)
    if operation.messages:
        lowest = min(message.id or 0 for message in operation.messages)
        replace_range(tx, peer_id, lowest, MAX_MESSAGE_ID, operation.messages)
    tx.reset_read_state(peer_id, CLOUD, operation.read_state)
    tx.set_peer_chat_state(peer_id, ChannelState(operation.pts))
    validate_all_summaries(tx, peer_id)


def _reset_histories(tx: Transaction) -> None:
    peers: set[PeerId] = set(tx.get_all_read_states())
    for group in (PeerGroupId.ROOT, PeerGroupId.ARCHIVE):
        peers.update(entry.peer_id for entry in tx.get_chat_list(group) if entry.peer_id)
        tx.add_chat_list_hole(group, ChatListHole.top())
    # A channel refused for good keeps an empty read state and nothing to ask about.
    peers -= {PeerId(channel) for channel in inaccessible_channels(tx)}
    for peer_id in peers:
        tx.add_hole(peer_id, CLOUD, _EVERYWHERE, 1, MAX_MESSAGE_ID)
        # Reads and deletions were skipped too: the counts are the server's to say.
        request_validation(tx, peer_id)
    validate_all_summaries(tx)
