"""The core property of live views: incremental replay equals recomputation.

After any sequence of transactions, every open view's latest snapshot equals
the snapshot of the same key opened fresh on the same database.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from postbox import (
    AnyViewKey,
    BasicPeerViewKey,
    CachedPeerData,
    ChatListHolesViewKey,
    ChatListInclusion,
    ChatListViewKey,
    ContactsViewKey,
    FailedMessageIdsViewKey,
    HistoryAnchor,
    MessageFailure,
    MessageFlags,
    MessageHistoryHoleSpace,
    MessageHistoryHolesViewKey,
    MessageHistoryViewKey,
    MessageId,
    MessageTags,
    OperationLogViewKey,
    Peer,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    PeerPresence,
    PeerPresencesViewKey,
    PeerReadState,
    PeerViewComponents,
    PeerViewKey,
    Postbox,
    PreferencesViewKey,
    PresenceStatus,
    ReadStateViewKey,
    StateCursor,
    StateViewKey,
    StoreMessage,
    SynchronizeReadStatesViewKey,
    TagSummaryViewKey,
    Transaction,
    UnreadCountsViewKey,
    UnsentMessagesViewKey,
)
from tests.postbox.live_views import assert_live_views_equal_fresh

PEERS = [
    PeerId.make(PeerNamespace.USER, 1),
    PeerId.make(PeerNamespace.USER, 2),
    PeerId.make(PeerNamespace.GROUP, 3),
]
PHOTO = int(MessageTags.PHOTO)


def view_keys() -> list[AnyViewKey]:
    """Every view type over the test's peers."""
    keys: list[AnyViewKey] = [
        StateViewKey(),
        ContactsViewKey(),
        PreferencesViewKey(frozenset({"a", "b"})),
        OperationLogViewKey(1, limit=3),
        OperationLogViewKey(2, limit=2),
        OperationLogViewKey(2, limit=-1),
        SynchronizeReadStatesViewKey(1),
        SynchronizeReadStatesViewKey(2),
        UnsentMessagesViewKey(),
        UnreadCountsViewKey(frozenset(PEERS[:2])),
        UnreadCountsViewKey(frozenset(PEERS[1:]), total=False),
        PeerPresencesViewKey(frozenset(PEERS)),
        PeerPresencesViewKey(frozenset(PEERS[:1])),
    ]
    keys += [
        ChatListViewKey(PeerGroupId.ROOT, count=2),
        ChatListViewKey(PeerGroupId.ROOT, count=10),
        ChatListHolesViewKey(),
        MessageHistoryHolesViewKey(),
    ]
    for peer_id in PEERS:
        keys += [
            MessageHistoryViewKey(peer_id, HistoryAnchor.upper_bound(), count=3),
            MessageHistoryViewKey(peer_id, HistoryAnchor.lower_bound(), count=2),
            MessageHistoryViewKey(peer_id, HistoryAnchor.first_unread(), count=2),
            MessageHistoryViewKey(peer_id, HistoryAnchor.at_message(MessageId(peer_id, 0, 6))),
            MessageHistoryViewKey(peer_id, HistoryAnchor.upper_bound(), count=2, tag=PHOTO),
            PeerViewKey(peer_id),
            PeerViewKey(peer_id, PeerViewComponents.PRESENCE),
            BasicPeerViewKey(peer_id),
            ReadStateViewKey(peer_id),
            TagSummaryViewKey(peer_id, PHOTO),
            FailedMessageIdsViewKey(peer_id),
        ]
    return keys


Write = Callable[[Transaction], Any]

peers = st.sampled_from(PEERS)
ids = st.integers(1, 12)


def _messages(peer_id: PeerId, batch: list[tuple[int, bool, bool]]) -> Write:
    return lambda tx: tx.add_messages(
        [
            StoreMessage(
                peer_id,
                0,
                id_,
                100 + id_,
                flags=MessageFlags.INCOMING if incoming else 0,
                tags=PHOTO if tagged else 0,
                text=f"m{id_}",
            )
            for id_, incoming, tagged in batch
        ]
    )


writes: st.SearchStrategy[Write] = st.one_of(
    st.builds(
        lambda p, name: lambda tx: tx.update_peers([Peer(p, name)]), peers, st.sampled_from("xyz")
    ),
    st.builds(
        lambda p, t: (
            lambda tx: tx.update_peer_presences({p: PeerPresence(PresenceStatus.ONLINE, t)})
        ),
        peers,
        st.integers(0, 3),
    ),
    st.builds(
        lambda p, about: lambda tx: tx.update_cached_peer_data(p, CachedPeerData(about=about)),
        peers,
        st.sampled_from("ab"),
    ),
    st.builds(
        lambda p, m: lambda tx: tx.update_notification_settings(p, PeerNotificationSettings(m)),
        peers,
        st.integers(0, 2),
    ),
    st.builds(
        lambda ps: lambda tx: tx.replace_contact_peer_ids(ps), st.frozensets(peers, max_size=3)
    ),
    st.builds(_messages, peers, st.lists(st.tuples(ids, st.booleans(), st.booleans()), max_size=4)),
    st.builds(lambda p, i: lambda tx: tx.delete_messages([MessageId(p, 0, i)]), peers, ids),
    st.builds(
        lambda p, i, t: (
            lambda tx: tx.update_message(
                MessageId(p, 0, i), StoreMessage(p, 0, i, 100 + i, flags=1, tags=t, text="edited")
            )
        ),
        peers,
        ids,
        st.sampled_from([0, PHOTO]),
    ),
    st.builds(
        lambda p, i: lambda tx: tx.apply_incoming_read_max_id(MessageId(p, 0, i)), peers, ids
    ),
    st.builds(
        lambda p, c: lambda tx: tx.reset_read_state(p, 0, PeerReadState(2, 1, 5, c)),
        peers,
        st.integers(0, 3),
    ),
    st.builds(lambda p, v: lambda tx: tx.set_marked_unread(p, 0, v), peers, st.booleans()),
    st.builds(
        lambda p, c: lambda tx: tx.replace_tag_summary(p, PHOTO, 0, c, 6),
        peers,
        st.integers(0, 9),
    ),
    st.builds(
        lambda p, tag, c: lambda tx: tx.add_operation_log_entry(p, tag, c),
        peers,
        st.sampled_from([1, 2]),
        st.integers(0, 3),
    ),
    st.builds(
        lambda p, tag, c, m: lambda tx: tx.add_operation_log_entry(p, tag, c, merged=m),
        peers,
        st.sampled_from([1, 2]),
        st.integers(0, 3),
        st.booleans(),
    ),
    st.builds(
        lambda p, tag, i: lambda tx: tx.remove_operation_log_entry(p, tag, i),
        peers,
        st.sampled_from([1, 2]),
        st.integers(1, 6),
    ),
    st.builds(
        lambda p, tag, i, c: lambda tx: tx.update_operation_log_entry(p, tag, i, c),
        peers,
        st.sampled_from([1, 2]),
        st.integers(1, 6),
        st.integers(0, 3),
    ),
    st.builds(
        lambda k, v: lambda tx: tx.set_preference(k, v), st.sampled_from("abc"), st.none() | ids
    ),
    st.builds(lambda n: lambda tx: tx.set_state(StateCursor(n, 0, 0, n)), ids),
    st.builds(
        lambda p, pin: lambda tx: tx.update_chat_list_inclusion(p, ChatListInclusion(0, pin)),
        peers,
        st.none() | st.integers(0, 2),
    ),
    st.builds(
        lambda p, lo, n: (
            lambda tx: tx.remove_hole(p, 0, MessageHistoryHoleSpace.everywhere(), lo, lo + n)
        ),
        peers,
        ids,
        st.integers(0, 5),
    ),
    st.builds(
        lambda p, lo, n: (
            lambda tx: tx.add_hole(p, 0, MessageHistoryHoleSpace.everywhere(), lo, lo + n)
        ),
        peers,
        ids,
        st.integers(0, 5),
    ),
    st.builds(
        lambda p: lambda tx: tx.add_messages([StoreMessage(p, 1, None, 200, flags=2)]), peers
    ),
    st.builds(
        lambda p, i, code: (
            lambda tx: tx.mark_message_failed(MessageId(p, 1, i), MessageFailure(code))
        ),
        peers,
        st.integers(1, 3),
        st.sampled_from(["CHAT_WRITE_FORBIDDEN", "MESSAGE_TOO_LONG"]),
    ),
    st.builds(lambda p, i: lambda tx: tx.delete_messages([MessageId(p, 1, i)]), peers, ids),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(writes, min_size=1, max_size=4), min_size=1, max_size=12))
def test_live_views_equal_freshly_opened_views(transactions: list[list[Write]]) -> None:
    def holes_follow_the_views(latest: Mapping[AnyViewKey, object]) -> None:
        # The hole singletons are what the open views show.
        history_holes = {
            view.first_hole  # type: ignore[attr-defined]
            for key, view in latest.items()
            if isinstance(key, MessageHistoryViewKey)
        } - {None}
        assert latest[MessageHistoryHolesViewKey()].entries == history_holes  # type: ignore[attr-defined]

    with tempfile.TemporaryDirectory() as directory, Postbox(Path(directory) / "p.db") as postbox:
        assert_live_views_equal_fresh(postbox, view_keys(), transactions, holes_follow_the_views)
