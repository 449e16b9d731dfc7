"""Checks for the postbox state machine: a ``Postbox`` against the reference model.

``check_tables`` reads every table back through a transaction and compares it with
the model; ``check_record`` compares a transaction's change record with what the
model says changed.
"""

from __future__ import annotations

from postbox import (
    MAX_MESSAGE_ID,
    ChangeRecord,
    ChatListEntryKey,
    ChatListHole,
    ChatListIndex,
    ChatListOperationKind,
    HoleKey,
    HoleOperationKind,
    InsertMessage,
    MessageHistoryHoleSpace,
    MessageId,
    PeerId,
    RemoveMessage,
    TagSummaryKey,
    Transaction,
    UpdateMessage,
)
from postbox.chat_list import ChatListEntryType
from tests.postbox.stateful_model import (
    GROUPS,
    LOG_TAGS,
    MAX_ID,
    MESSAGE_TAGS,
    NAMESPACES,
    PEERS,
    SPACE_TAGS,
    WORDS,
    Model,
    _merged_index,
    chat_list_order,
    hole_difference,
    hole_union,
)

# -- reading every table back -------------------------------------------------------


def check_tables(tx: Transaction, model: Model, *, committed: bool) -> None:
    """Compare every table, as ``tx`` reads it, with ``model``.

    ``committed``: ``model`` is what was committed, so the full-text index (written
    at commit) must match it too.
    """
    # First, before any other read brings the chat list up to date.
    for group in GROUPS:
        assert tx.get_pinned_peer_ids(group) == model.pinned(group), group
    for peer_id in PEERS:
        assert tx.get_peer(peer_id) == model.peers.get(peer_id)
        assert tx.get_read_state(peer_id) == model.combined_read_state(peer_id)
        assert tx.get_top_message_index(peer_id) == model.top_message(peer_id)
        assert tx.get_chat_list_inclusion(peer_id) == model.inclusions.get(peer_id)
        assert tx.get_chat_list_position(peer_id) == model.position(peer_id)
        for namespace in NAMESPACES:
            check_history(tx, model, peer_id, namespace)
        for tag in LOG_TAGS:
            assert tx.get_operation_log_entries(peer_id, tag) == model.log_entries(peer_id, tag)
        for word in WORDS if committed else ():
            expected = [m.index for m in model.messages.values() if word in m.text.split()]
            found = tx.search_messages(word, peer_id=peer_id, limit=1000)
            assert sorted(found) == sorted(i for i in expected if i.id.peer_id == peer_id)
    for group in GROUPS:
        entries = model.chat_list(group)
        assert tx.get_chat_list(group) == entries, group
        assert tx.get_chat_list(group, count=2) == entries[:2]
        for n, entry in enumerate(entries):
            assert tx.get_chat_list(group, below=entry.index) == entries[n + 1 :]
        holes = [e.index.message_index for e in entries if e.type is ChatListEntryType.HOLE]
        assert tx.get_chat_list_holes(group) == [ChatListHole(index) for index in holes]
    for tag in LOG_TAGS:
        merged = model.merged_log_entries(tag)
        assert tx.get_merged_operation_log_entries(tag) == merged
        if len(merged) > 1:
            start = _merged_index(merged[1])
            assert (
                tx.get_merged_operation_log_entries(tag, from_index=start, limit=2) == (merged[1:3])
            )
    unsent = sorted(model.unsent(), key=lambda i: (int(i.peer_id), i.namespace, i.id))
    assert tx.get_unsent_message_ids() == unsent
    failed = sorted(model.failures, key=lambda i: (int(i.peer_id), i.namespace, i.id))
    assert tx.get_failed_message_ids() == failed
    for peer_id in PEERS:
        mine = [(i, model.failures[i]) for i in failed if i.peer_id == peer_id]
        assert tx.get_failed_messages(peer_id) == mine
        assert tx.has_failed_messages(peer_id) == bool(mine)
        for message_id, failure in mine:
            assert tx.get_message_failure(message_id) == failure


def check_history(tx: Transaction, model: Model, peer_id: PeerId, namespace: int) -> None:
    """Messages, ids, holes, tag indices and tag summaries of one (peer, namespace)."""
    expected = model.messages_of(peer_id, namespace)
    assert tx.get_messages(peer_id, namespace) == expected
    assert tx.get_messages(peer_id, namespace, newest_first=True, limit=3) == expected[::-1][:3]
    if expected:
        middle = len(expected) // 2
        bound = expected[middle].index
        assert tx.get_messages(peer_id, namespace, lower=bound) == expected[middle:]
        assert tx.get_messages(peer_id, namespace, upper=bound) == expected[:middle]
    assert tx.message_count(peer_id, namespace) == len(expected)
    top_id = max([MAX_ID, *(m.id.id for m in expected)])
    for id_ in range(1, top_id + 2):
        message_id = MessageId(peer_id, namespace, id_)
        message = model.messages.get(message_id)
        assert tx.get_message(message_id) == message
        assert tx.get_message_index(message_id) == (message and message.index)
    for tag in SPACE_TAGS:
        space = MessageHistoryHoleSpace(tag)
        holes = model.holes_of(peer_id, namespace, tag)
        assert tx.get_holes(peer_id, namespace, space) == list(holes), (tag, namespace)
        for id_ in (1, 20, MAX_ID + 1, MAX_MESSAGE_ID):
            containing = next((hole for hole in holes if id_ in hole), None)
            assert tx.get_hole_containing(peer_id, namespace, space, id_) == containing
    for tag in MESSAGE_TAGS:
        tagged = [m.index for m in expected if m.tags & tag]
        found = tx.get_tagged_message_indices(peer_id, tag, namespace, newest_first=False)
        assert found == tagged
        summary = model.summaries.get((peer_id, tag, namespace))
        assert tx.get_tag_summary(peer_id, tag, namespace) == summary


# -- checking a change record ---------------------------------------------------------


def check_record(record: ChangeRecord, old: Model, new: Model) -> None:
    """``record`` lists exactly what changed from ``old`` to ``new``."""
    check_message_operations(record, old, new)
    check_hole_operations(record, old, new)
    check_chat_list_operations(record, old, new)
    check_operation_log_operations(record, old, new)
    assert dict(record.updated_peers) == {
        p: new.peers.get(p) for p in PEERS if old.peers.get(p) != new.peers.get(p)
    }
    assert dict(record.updated_read_states) == {
        p: new.combined_read_state(p)
        for p in PEERS
        if old.combined_read_state(p) != new.combined_read_state(p)
    }
    assert record.updated_tag_summaries == {
        TagSummaryKey(*key)
        for key in old.summaries.keys() | new.summaries.keys()
        if old.summaries.get(key) != new.summaries.get(key)
    }
    old_unsent, new_unsent = old.unsent(), new.unsent()
    assert record.added_unsent_ids == new_unsent - old_unsent
    assert record.removed_unsent_ids == old_unsent - new_unsent
    assert record.updated_failed_message_ids == {
        i
        for i in old.failures.keys() | new.failures.keys()
        if old.failures.get(i) != new.failures.get(i)
    }
    # Nothing this machine does touches the rest.
    assert not (
        record.updated_presences
        or record.updated_cached_peer_data
        or record.updated_notification_settings
        or record.updated_peer_chat_states
        or record.updated_preferences
    )
    assert record.updated_state is None and record.replaced_contact_peer_ids is None


def check_message_operations(record: ChangeRecord, old: Model, new: Model) -> None:
    """Replayed on the old history, the operations give the new one; and they are
    the inserts, removals and updates the model made."""
    journal = new.journal
    assert set(record.message_operations) == journal.message_peers()
    inserted, removed, updated = set(), set(), set()
    for peer_id, operations in record.message_operations.items():
        history = {i: m for i, m in old.messages.items() if i.peer_id == peer_id}
        for operation in operations:
            match operation:
                case InsertMessage(index=index):
                    assert index.id.peer_id == peer_id and index.id not in history
                    history[index.id] = operation.message
                    inserted.add(index.id)
                case RemoveMessage(index=index, tags=tags):
                    gone = history.pop(index.id)
                    assert (gone.index, gone.tags) == (index, tags)
                    removed.add(index.id)
                case UpdateMessage(previous_index=previous, message=message):
                    assert history.pop(previous.id).index == previous
                    assert message.index.id not in history
                    history[message.index.id] = message
                    updated.add((previous.id, message.index.id))
        assert history == {i: m for i, m in new.messages.items() if i.peer_id == peer_id}
    assert (inserted, removed, updated) == (journal.inserted, journal.removed, journal.updated)


def check_hole_operations(record: ChangeRecord, old: Model, new: Model) -> None:
    """One key per space a hole changed in; replayed, the operations give its new holes."""
    expected_keys = {
        HoleKey(peer_id, namespace, MessageHistoryHoleSpace(tag))
        for peer_id, namespace, tag in new.journal.hole_keys
    }
    assert set(record.hole_operations) == expected_keys
    for key, operations in record.hole_operations.items():
        peer_id, namespace, space = key
        holes = old.holes_of(peer_id, namespace, space.tag)
        for kind, ids in operations:
            add = kind is HoleOperationKind.INSERT
            holes = hole_union(holes, *ids) if add else hole_difference(holes, *ids)
        assert holes == new.holes_of(peer_id, namespace, space.tag), key


_INSERTS = {ChatListOperationKind.INSERT_ENTRY, ChatListOperationKind.INSERT_HOLE}


def check_chat_list_operations(record: ChangeRecord, old: Model, new: Model) -> None:
    """Replayed on the old lists, the operations give the new ones; every peer that
    moved has its new position listed."""
    assert set(record.chat_list_operations) <= set(GROUPS)
    for group in GROUPS:
        entries = set(old.chat_list(group))
        for operation in record.chat_list_operations.get(group, ()):
            if operation.hole is not None:
                index = ChatListIndex(None, operation.hole.index)
                entry = ChatListEntryKey(index, ChatListEntryType.HOLE)
            else:
                assert operation.index is not None
                entry = ChatListEntryKey(operation.index, ChatListEntryType.MESSAGE)
            if operation.kind in _INSERTS:
                assert entry not in entries, operation
                entries.add(entry)
            else:
                entries.remove(entry)
        assert sorted(entries, key=chat_list_order, reverse=True) == new.chat_list(group), group
    moved = {peer_id for peer_id in PEERS if old.position(peer_id) != new.position(peer_id)}
    assert moved <= set(record.updated_chat_list_positions)
    for peer_id, position in record.updated_chat_list_positions.items():
        assert position == new.position(peer_id), peer_id


def check_operation_log_operations(record: ChangeRecord, old: Model, new: Model) -> None:
    assert set(record.operation_log_operations) == new.journal.log_keys
    for key, operations in record.operation_log_operations.items():
        entries = dict(old.log.get(key, {}))
        for operation in operations:
            entry = operation.entry
            assert (entry.peer_id, entry.tag) == key
            local = entry.tag_local_index
            if operation.action == "remove":
                assert entries.pop(local) == entry
                continue
            if operation.action == "add":
                assert local not in entries
            else:
                assert operation.action == "update"
                assert entries[local].merged_index == entry.merged_index
            entries[local] = entry
        assert entries == new.log.get(key, {})
