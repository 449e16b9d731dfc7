"""The pure parts of verify's hole rules: which ids a chat claims to know, and which
server chats lie inside a chat-list hole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from postbox import (
    MAX_MESSAGE_ID,
    ChatListHole,
    ClosedRange,
    MessageId,
    MessageIndex,
    PeerGroupId,
    PeerId,
)
from sync.protocol import Dialog
from sync.verify.compare_chats import ServerChat, in_chat_list_hole
from sync.verify.local_side import LocalChat

TOP = 80


def chat_with_holes(holes: list[ClosedRange]) -> LocalChat:
    return LocalChat(PeerId(7), (), tuple(holes), (), None, None, None, None, ())


hole = st.tuples(st.integers(1, TOP), st.integers(0, 20)).map(
    lambda pair: ClosedRange(pair[0], pair[0] + pair[1])
)


@given(st.lists(hole, max_size=5), st.booleans())
def test_known_ranges_are_exactly_the_ids_outside_the_holes(
    holes: list[ClosedRange], open_ended: bool
) -> None:
    if open_ended:
        holes.append(ClosedRange(TOP + 30, MAX_MESSAGE_ID))
    chat = chat_with_holes(holes)
    ranges = chat.known_ranges()
    assert all(lower <= upper for lower, upper in ranges)
    assert all(a[1] + 1 < b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    for id_ in [*range(1, TOP + 40), MAX_MESSAGE_ID]:
        known = any(lower <= id_ <= upper for lower, upper in ranges)
        assert known == (not chat.in_hole(id_)), id_


def server_chat(date: int, top: int, peer: int, *, pinned: bool = False) -> ServerChat:
    return ServerChat(Dialog(peer, top, 0, 0, 0, pinned=pinned), PeerGroupId.ROOT, date)


def hole_at(date: int, top: int, peer: int) -> ChatListHole:
    return ChatListHole(MessageIndex(MessageId(PeerId(peer), 0, top), date))


@given(
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 5)),
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 5)),
)
def test_a_chat_is_inside_a_hole_exactly_when_it_is_older(
    chat: tuple[int, int, int], boundary: tuple[int, int, int]
) -> None:
    inside = in_chat_list_hole(server_chat(*chat), (hole_at(*boundary),))
    assert inside == (chat < boundary)


def test_only_the_top_hole_covers_pinned_chats() -> None:
    pinned = server_chat(1, 1, 1, pinned=True)
    assert in_chat_list_hole(pinned, (ChatListHole.top(),))
    assert not in_chat_list_hole(pinned, (hole_at(10**6, 1, 1),))
    assert in_chat_list_hole(server_chat(10**6, 1, 1), (ChatListHole.top(),))
