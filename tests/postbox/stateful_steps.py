"""Steps of a transaction for the postbox state machine, and strategies drawing them.

A ``Call`` is one write made on the transaction and on the model alike, ``ReadBack``
reads every table mid-transaction and ``Fail`` ends one with an exception;
``Writes`` draws writes given the model before the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from postbox import (
    MAX_MESSAGE_ID,
    ChatListInclusion,
    ForwardInfo,
    Media,
    MediaKind,
    MessageFailure,
    MessageHistoryHoleSpace,
    MessageId,
    Peer,
    PeerFlags,
    PeerGroupId,
    PeerId,
    PeerReadState,
    StoreMessage,
    Transaction,
)
from tests.postbox.stateful_checks import check_tables
from tests.postbox.stateful_model import (
    CHAT_LIST_HOLES,
    CLOUD,
    FAILED,
    FILE,
    GROUPS,
    INCOMING,
    LOCAL,
    LOG_TAGS,
    MAX_ID,
    MESSAGE_TAGS,
    PEERS,
    PHOTO,
    UNSENT,
    VOICE,
    BoomError,
    Model,
)

# -- steps of a transaction -------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One write, made on the transaction and on the model alike; results must agree."""

    method: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()

    def run(self, tx: Transaction, model: Model) -> None:
        kwargs = dict(self.kwargs)
        result = getattr(tx, self.method)(*self.args, **kwargs)
        assert result == getattr(model, self.method)(*self.args, **kwargs), self

    def __repr__(self) -> str:
        args = [repr(arg) for arg in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"tx.{self.method}({', '.join(args)})"


def call(method: str, *args: Any, **kwargs: Any) -> Call:
    return Call(method, args, tuple(kwargs.items()))


class ReadBack:
    """Reads every table mid-transaction: they show the transaction's own writes."""

    def run(self, tx: Transaction, model: Model) -> None:
        check_tables(tx, model, committed=False)

    def __repr__(self) -> str:
        return "ReadBack()"


@dataclass(frozen=True)
class Fail:
    """Ends a transaction with an exception: ours, or postbox's on a bad argument."""

    how: str
    peer_id: PeerId

    def run(self, tx: Transaction, model: Model) -> None:
        if self.how == "hole":
            tx.add_hole(self.peer_id, CLOUD, MessageHistoryHoleSpace.everywhere(), 5, 3)
        elif self.how == "pin":
            tx.set_pinned_peer_ids(PeerGroupId.ROOT, [self.peer_id, self.peer_id])
        elif self.how == "message":
            valid = StoreMessage(self.peer_id, CLOUD, MAX_ID + 1, 100, flags=INCOMING, text="alpha")
            tx.add_messages([valid, StoreMessage(self.peer_id, CLOUD, None, 100)])
        raise BoomError


Step = Call | ReadBack | Fail


# -- strategies ---------------------------------------------------------------------

peer_ids = st.sampled_from(PEERS)
namespaces = st.sampled_from((CLOUD, CLOUD, CLOUD, LOCAL))
cloud_ids = st.integers(1, MAX_ID)
# Few timestamps, drawn apart from ids: ties, and an order by time unlike the one by id.
timestamps = st.integers(100, 112)
peers = st.builds(
    Peer,
    id=peer_ids,
    name=st.sampled_from(("Ann", "Bob")),
    username=st.sampled_from((None, "nick")),
    access_hash=st.just(0),
    flags=st.sampled_from((0, int(PeerFlags.VERIFIED))),
    associated_peer_id=st.none(),
)
hole_spaces = st.sampled_from((0, 0, 0, PHOTO, FILE, VOICE)).map(MessageHistoryHoleSpace)
inclusions = st.one_of(
    st.none(),
    st.just(ChatListInclusion()),
    st.builds(
        ChatListInclusion,
        st.sampled_from(GROUPS),
        st.sampled_from((None, None, 0, 1, 2)),
        st.sampled_from((None, None, 95, 106, 120)),
    ),
)
read_states = st.builds(
    PeerReadState,
    st.integers(0, MAX_ID),
    st.integers(0, MAX_ID),
    st.integers(0, MAX_ID + 5),
    st.integers(0, 4),
    st.booleans(),
)
failures = st.builds(
    MessageFailure,
    st.sampled_from(("", "CHAT_WRITE_FORBIDDEN", "MESSAGE_TOO_LONG")),
    st.sampled_from(("", "only the channel's admins can post")),
    st.sampled_from((None, {"random_id": 7, "local_id": 1, "media": ((5, 1),)})),
)
log_tags = st.sampled_from(LOG_TAGS)
log_contents = st.sampled_from(("send", "edit", 7))
log_indices = st.integers(1, 6)


def store_message(
    peer_id: PeerId, namespace: int, id_: int | None, times: st.SearchStrategy[int] = timestamps
) -> st.SearchStrategy[Any]:
    return st.builds(
        StoreMessage,
        peer_id=st.just(peer_id),
        namespace=st.just(namespace),
        id=st.just(id_),
        timestamp=times,
        flags=st.sampled_from((0, 0, INCOMING, INCOMING, INCOMING | FAILED, UNSENT, FAILED)),
        tags=st.sampled_from((0, 0, PHOTO, FILE, PHOTO | FILE)),
        author_id=st.sampled_from((None, 7)),
        text=st.sampled_from(("", "alpha", "beta gamma", "alpha beta", "gamma")),
        media=st.sampled_from(((), (), (Media(MediaKind.PHOTO, 1, 10),))),
        reply_to_id=st.sampled_from((None, None, 3)),
        edit_timestamp=st.sampled_from((None, None, 130)),
        globally_unique_id=st.none(),
        thread_id=st.none(),
        forward_info=st.sampled_from((None, None, ForwardInfo(PeerId(7), 50, PeerId(8), 4))),
    )


@st.composite
def hole_calls(draw: st.DrawFn) -> Call:
    lower = draw(st.integers(1, MAX_ID + 5))
    upper = min(
        lower + draw(st.one_of(st.integers(0, 15), st.just(MAX_MESSAGE_ID))), MAX_MESSAGE_ID
    )
    method = draw(st.sampled_from(("add_hole", "remove_hole")))
    return call(method, draw(peer_ids), draw(namespaces), draw(hole_spaces), lower, upper)


class Writes:
    """Strategies for writes, given the model before the transaction.

    Local ids come from a per-namespace counter that explicit ids do not advance, so
    an explicit local id at or above it would later collide with an assigned one
    (reported separately); explicit local ids here stay below the counter.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self.existing = sorted(model.messages)
        self.local_ids = [
            MessageId(peer_id, namespace, id_)
            for (peer_id, namespace), next_id in sorted(model.next_local_id.items())
            for id_ in range(1, next_id)
        ]

    def message_ids(self) -> st.SearchStrategy[MessageId]:
        """Stored ids, and any others."""
        fresh = st.builds(MessageId, peer_ids, namespaces, cloud_ids)
        return st.one_of(fresh, *([st.sampled_from(self.existing)] if self.existing else []))

    def new_message(self) -> st.SearchStrategy[StoreMessage]:
        """A cloud message, a local one (id assigned), or one with a stored id."""
        options = [
            st.tuples(peer_ids, st.just(CLOUD), cloud_ids),
            st.tuples(peer_ids, st.just(LOCAL), st.none()),
        ]
        if self.existing or self.local_ids:
            options.append(st.sampled_from(self.existing + self.local_ids))
        return st.one_of(options).flatmap(lambda key: store_message(*key))

    def add(self, max_size: int = 10) -> st.SearchStrategy[Call]:
        batches = st.lists(self.new_message(), min_size=1, max_size=max_size)
        return batches.map(lambda batch: call("add_messages", tuple(batch)))

    def delete(self) -> st.SearchStrategy[Call]:
        ids = st.lists(self.message_ids(), min_size=1, max_size=3)
        return ids.map(lambda ids: call("delete_messages", tuple(ids)))

    def update(self) -> st.SearchStrategy[Call]:
        @st.composite
        def build(draw: st.DrawFn) -> Call:
            message_id = draw(self.message_ids())
            peer_local = [i.id for i in self.local_ids if i.peer_id == message_id.peer_id]
            moves = [cloud_ids.map(lambda i: (CLOUD, i))]
            if peer_local:
                moves.append(st.sampled_from(peer_local).map(lambda i: (LOCAL, i)))
            if draw(st.integers(0, 2)) == 0:  # move to another id (maybe a stored one)
                namespace, id_ = draw(st.one_of(moves))
            else:
                namespace, id_ = message_id.namespace, message_id.id
            stored = self.model.messages.get(message_id)
            keep_time = stored is not None and draw(st.booleans())
            times = st.just(stored.timestamp) if keep_time and stored else timestamps
            store = draw(store_message(message_id.peer_id, namespace, id_, times))
            return call("update_message", message_id, store)

        return build()

    def fail(self) -> st.SearchStrategy[Call]:
        """A message marked failed (or given another failure): mostly a stored one."""
        ids = st.sampled_from(self.existing) if self.existing else self.message_ids()
        return st.builds(call, st.just("mark_message_failed"), ids | self.message_ids(), failures)

    def read(self) -> st.SearchStrategy[Call]:
        method = st.sampled_from(("apply_incoming_read_max_id", "apply_outgoing_read_max_id"))
        ids = st.builds(MessageId, peer_ids, namespaces, st.integers(1, MAX_ID + 5))
        # A read the server reports says what is left unread.
        server_read = st.builds(
            lambda id_, count: call("apply_incoming_read_max_id", id_, unread_count=count),
            ids,
            st.integers(0, 8),
        )
        return st.builds(call, method, ids) | server_read

    def any(self) -> st.SearchStrategy[Call]:
        return st.one_of(
            st.lists(peers, min_size=1, max_size=3).map(lambda p: call("update_peers", tuple(p))),
            self.add(max_size=6),
            self.delete(),
            self.update(),
            self.fail(),
            hole_calls(),
            self.read(),
            st.builds(call, st.just("reset_read_state"), peer_ids, namespaces, read_states),
            st.builds(call, st.just("set_marked_unread"), peer_ids, namespaces, st.booleans()),
            st.builds(call, st.just("update_chat_list_inclusion"), peer_ids, inclusions),
            st.builds(
                call,
                st.just("set_pinned_peer_ids"),
                st.sampled_from(GROUPS),
                st.lists(peer_ids, unique=True, max_size=3).map(tuple),
            ),
            st.builds(
                call,
                st.sampled_from(("add_chat_list_hole", "remove_chat_list_hole")),
                st.sampled_from(GROUPS),
                st.sampled_from(CHAT_LIST_HOLES),
            ),
            st.builds(
                call,
                st.just("replace_tag_summary"),
                peer_ids,
                st.sampled_from(MESSAGE_TAGS),
                st.just(CLOUD),
                st.integers(0, 4),
                st.integers(0, MAX_ID + 5),
            ),
            st.builds(
                lambda peer_id, tag, contents, merged: call(
                    "add_operation_log_entry", peer_id, tag, contents, merged=merged
                ),
                peer_ids,
                log_tags,
                log_contents,
                st.booleans(),
            ),
            st.builds(
                call,
                st.just("update_operation_log_entry"),
                peer_ids,
                log_tags,
                log_indices,
                log_contents,
            ),
            st.builds(call, st.just("remove_operation_log_entry"), peer_ids, log_tags, log_indices),
        )

    def steps(self) -> st.SearchStrategy[Step]:
        return st.one_of(self.any(), st.just(ReadBack()))
