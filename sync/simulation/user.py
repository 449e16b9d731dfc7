"""The simulated user: opens chats, scrolls, sends, edits, forwards, deletes, reads,
mutes, types drafts, retries or deletes failed messages, and deletes or types a draft
elsewhere.

Each ``act`` does one thing through the client's real paths: history windows through
``postbox.combined_view`` (scrolling moves the window's anchor, often into a hole),
sends, edits, forwards, deletions ("unsend") and reads through the outbound queue (``enqueue_*``,
as ``client.account`` does). "delete" and "draft elsewhere" are done from another device
of the account (a second server session); the client learns them by push. Now and then
a send goes into a broadcast channel the account only reads: the server refuses it for
good, and it must become a failed message without holding up the sends queued after it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from postbox import (
    HistoryAnchor,
    MessageFlags,
    MessageHistoryView,
    MessageHistoryViewKey,
    MessageId,
    MessageNamespace,
    PeerId,
    PeerNamespace,
    PeerNotificationSettings,
    Postbox,
    StoreMessage,
    Subscription,
    SynchronizeableDraft,
    Transaction,
)
from sync.engine import (
    enqueue_delete,
    enqueue_draft,
    enqueue_edit,
    enqueue_forward,
    enqueue_mute,
    enqueue_read,
    enqueue_send,
)
from sync.engine.convert import CLOUD
from sync.engine.failed_sends import retry_failed_send
from sync.engine.log_tags import SEND_TAG
from sync.engine.payloads import MAX_DRAFT_LENGTH, PayloadError
from sync.engine.replay import ensure_listed
from sync.protocol import (
    MAX_TEXT,
    DeleteMessages,
    ProtocolError,
    Request,
    SaveDraft,
    WireRecord,
)
from sync.server.faults import FaultInjector
from sync.server.service import Session
from sync.simulation.sends import SendLedger
from sync.simulation.world import SimServer

__all__ = ["SimulatedUser", "queue_unchecked"]

MUTED_FOREVER = PeerNotificationSettings.MUTED_FOREVER
#: Messages on each side of the anchor in an open chat.
WINDOW = 20
_ACTIONS = (
    "open", "scroll", "scroll", "send", "send", "edit", "read", "read", "delete", "unsend",
    "forward", "close", "mute", "draft", "draft elsewhere", "retry",
)  # fmt: skip
#: How often a send into a channel is made anyway (the server refuses it).
CHANNEL_SEND_ODDS = 0.3


class SimulatedUser:
    def __init__(
        self,
        rng: random.Random,
        trace: Callable[[str], None],
        *,
        token: str,
        ledger: SendLedger | None = None,
        seat: int = 0,
    ) -> None:
        self._rng = rng
        self._trace = trace
        #: Where the failed sends this user deletes are noted (for ``check_sends``).
        self.ledger = ledger if ledger is not None else SendLedger()
        self._seat = seat
        #: The account's token: its other device speaks for the same account.
        self._token = token
        self.open: dict[PeerId, Subscription] = {}
        self._other_device: Session | None = None
        self._server_seen: SimServer | None = None

    def close_all(self) -> None:
        """The app went away: its views with it."""
        for subscription in self.open.values():
            subscription.dispose()
        self.open.clear()

    def holes_in_view(self) -> list[str]:
        """Open windows that still show a hole next to their messages."""
        waiting = []
        for peer_id, subscription in self.open.items():
            snapshot = subscription.latest
            if snapshot is None:
                continue
            for view in snapshot.views.values():
                if isinstance(view, MessageHistoryView) and view.first_hole is not None:
                    waiting.append(f"{int(peer_id)}: {view.first_hole}")
        return waiting

    def act(self, postbox: Postbox, server: SimServer | None, now: int) -> None:
        rng = self._rng
        if server is None or server.store is None:
            return
        account = server.service.accounts.authorize(self._token)
        if account is None:
            return
        store = server.service.accounts.box(account)  # what this account has
        chats = [peer for peer, _size in store.chat_sizes()]
        if not chats:
            return
        action = rng.choice(_ACTIONS)
        peer = PeerId(rng.choice(chats))
        if action in ("edit", "read", "send", "delete", "unsend", "forward", "close", "retry") and (
            self.open
        ):
            peer = rng.choice(sorted(self.open))
        top = max((m.id for m in store.recent_messages(int(peer), 1)), default=0)
        self._trace(f"user {action} {int(peer)}")
        if action in ("open", "scroll"):
            anchor = rng.choice(
                (
                    HistoryAnchor.upper_bound(),
                    HistoryAnchor.lower_bound(),
                    HistoryAnchor.at_message(MessageId(peer, CLOUD, rng.randint(1, max(1, top)))),
                )
            )
            self._show(postbox, peer, anchor)
        elif action == "close":
            subscription = self.open.pop(peer, None)
            if subscription is not None:
                subscription.dispose()
        elif action == "send" and (
            peer.namespace != PeerNamespace.CHANNEL or rng.random() < CHANNEL_SEND_ODDS
        ):
            text = f"sim {rng.getrandbits(24):06x}"
            postbox.transaction(
                lambda tx: enqueue_send(
                    tx, peer, text, timestamp=now, author_id=PeerId(store.self_id),
                    random_id=rng.getrandbits(62),
                )
            )  # fmt: skip
        elif action == "edit":
            own = postbox.run(lambda tx: _own_messages(tx, peer))
            if own:
                target = rng.choice(own)
                text = f"edited {rng.getrandbits(24):06x}"
                postbox.transaction(lambda tx: enqueue_edit(tx, target, text))
        elif action == "read":
            local_top = postbox.run(
                lambda tx: tx.get_messages(peer, CLOUD, limit=1, newest_first=True)
            )
            if local_top:
                max_id = local_top[0].id.id
                postbox.transaction(lambda tx: enqueue_read(tx, peer, max_id))
        elif action == "unsend" and peer.namespace in (PeerNamespace.USER, PeerNamespace.GROUP):
            own = postbox.run(lambda tx: _own_messages(tx, peer))
            if own:
                doomed = rng.sample(own, min(len(own), rng.randint(1, 2)))
                postbox.transaction(lambda tx: enqueue_delete(tx, peer, doomed))
        elif action == "forward" and peer.namespace != PeerNamespace.SECRET_CHAT:
            stored = postbox.run(
                lambda tx: tx.get_messages(peer, CLOUD, limit=30, newest_first=True)
            )
            targets = [
                PeerId(chat)
                for chat in chats
                if PeerId(chat).namespace in (PeerNamespace.USER, PeerNamespace.GROUP)
            ]
            if stored and targets:
                sources = [m.id for m in rng.sample(stored, min(len(stored), rng.randint(1, 2)))]
                into = rng.choice(targets)
                postbox.transaction(
                    lambda tx: enqueue_forward(
                        tx, into, sources, timestamp=now, author_id=PeerId(store.self_id),
                        rng=rng,
                    )
                )  # fmt: skip
        elif action == "retry":
            failed = postbox.run(lambda tx: tx.get_failed_messages(peer))
            if failed:
                target = rng.choice(failed)[0]
                if rng.random() < 0.5:
                    postbox.transaction(lambda tx: retry_failed_send(tx, target, rng=rng))
                else:
                    deleted = postbox.transaction(lambda tx: enqueue_delete(tx, peer, [target]))
                    deleted.add_done_callback(lambda done: self._withdrawn(done, target))
        elif action == "mute":
            until = rng.choice((0, MUTED_FOREVER, now + 3600))
            postbox.transaction(lambda tx: enqueue_mute(tx, peer, until))
        elif action == "draft":
            draft = self._draft(rng, top, now)
            postbox.transaction(lambda tx: enqueue_draft(tx, peer, draft))
        elif action == "draft elsewhere" and peer.namespace != PeerNamespace.SECRET_CHAT:
            draft = self._draft(rng, top, now)
            text = "" if draft is None else draft.text
            reply_to = None if draft is None else draft.reply_to_id
            self._elsewhere(server, account, "saveDraft", SaveDraft(int(peer), text, reply_to))
        elif action == "delete" and peer.namespace != PeerNamespace.CHANNEL:
            own_ids = [m.id for m in store.recent_messages(int(peer), 10) if m.out]
            if own_ids:
                deletion = DeleteMessages(int(peer), (rng.choice(own_ids),))
                self._elsewhere(server, account, "deleteMessages", deletion)

    def _withdrawn(self, done: Future[int], message_id: MessageId) -> None:
        if done.exception() is None and done.result():
            self.ledger.withdraw(self._seat, message_id)

    def bad_payload(
        self, postbox: Postbox, server: SimServer | None, now: int, rng: random.Random
    ) -> str | None:
        """Queue a payload the protocol cannot carry: through ``enqueue_*``, which must
        refuse it (else the divergence is returned), or straight into the Postbox past
        its checks, which the outbound queue must turn into a failed message without
        holding up the rest."""
        if server is None or server.store is None:
            return None
        account = server.service.accounts.authorize(self._token)
        if account is None:
            return None
        store = server.service.accounts.box(account)
        chats = [PeerId(peer) for peer, _size in store.chat_sizes()]
        if not chats:
            return None
        peer = rng.choice(chats)
        author = PeerId(store.self_id)
        if rng.random() < 0.5:
            kind, attempt = _refused_payload(rng, postbox, peer, author, now)
            self._trace(f"user bad payload {kind} {int(peer)}")
            try:
                postbox.run(attempt)
            except PayloadError as error:
                self._trace(f"user bad payload refused: {error.code}")
                return None
            return f"payloads: enqueue took {kind} into peer {int(peer)}"
        kind, text, contents = _unchecked_payload(rng)
        self._trace(f"user unchecked payload {kind} {int(peer)}")
        postbox.transaction(
            lambda tx: queue_unchecked(tx, peer, text, contents, timestamp=now, author_id=author)
        )
        return None

    @staticmethod
    def _draft(rng: random.Random, top: int, now: int) -> SynchronizeableDraft | None:
        """Something typed and left (a third of the time the draft is cleared)."""
        if rng.random() < 1 / 3:
            return None
        reply_to = rng.randint(1, top) if top and rng.random() < 0.3 else None
        return SynchronizeableDraft(f"draft {rng.getrandbits(24):06x}", reply_to, now)

    def _show(self, postbox: Postbox, peer: PeerId, anchor: HistoryAnchor) -> None:
        previous = self.open.pop(peer, None)
        if previous is not None:
            previous.dispose()
        self.open[peer] = postbox.combined_view([MessageHistoryViewKey(peer, anchor, WINDOW)])

    def _elsewhere(self, server: SimServer, account: int, method: str, params: WireRecord) -> None:
        """Call ``method`` from the account's other device."""
        if self._other_device is None or self._server_seen is not server:
            faults = FaultInjector.for_connection(server.config.faults, 0, 0)
            self._other_device = Session(
                0,
                faults,
                authorized=True,
                peer_name="other device",
                account=account,
            )
            self._server_seen = server
        try:
            server.service.handle(self._other_device, Request(0, method, params))
        except ProtocolError as error:
            self._trace(f"user {method} elsewhere refused: {error}")


def _refused_payload(
    rng: random.Random, postbox: Postbox, peer: PeerId, author: PeerId, now: int
) -> tuple[str, Callable[[Transaction], object]]:
    """Something ``enqueue_*`` must refuse, and what it is."""
    over = MAX_TEXT + rng.choice((1, 100, 50_000))
    choice = rng.randrange(3)
    if choice == 0:
        return f"a text of {over} characters", lambda tx: enqueue_send(
            tx, peer, "t" * over, timestamp=now, author_id=author, random_id=rng.getrandbits(62)
        )
    if choice == 1:
        draft = SynchronizeableDraft("d" * (MAX_DRAFT_LENGTH + 1), None, now)
        return "a draft over its limit", lambda tx: enqueue_draft(tx, peer, draft)
    own = postbox.run(lambda tx: _own_messages(tx, peer))
    target = own[0] if own else MessageId(peer, CLOUD, 1)
    return f"an edit of {over} characters", lambda tx: enqueue_edit(tx, target, "e" * over)


#: Sends an older client or a bug could write past ``enqueue_send``: what, the text
#: shown, and the entry's contents (a valid random id is drawn for those that have one).
_UNCHECKED: tuple[tuple[str, object, dict[str, Any]], ...] = (
    ("long-text", MAX_TEXT + 1, {}),
    ("huge-text", 4 * 1024 * 1024 + 1, {}),
    ("text-not-a-string", "7", {"text": 7}),
    ("no-random-id", "x", {"random_id": None}),
    ("random-id-out-of-range", "x", {"random_id": 2**64 - 1}),
    ("reply-to-a-string", "x", {"reply_to": "yesterday"}),
    ("unreadable-media", "x", {"media": [["gif"]]}),
    ("empty", " ", {}),
)


def _unchecked_payload(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
    kind, shown, overrides = rng.choice(_UNCHECKED)
    text = "u" * shown if isinstance(shown, int) else str(shown)
    contents: dict[str, Any] = {"random_id": rng.getrandbits(62), "text": text, "reply_to": None}
    contents.update(overrides)
    if contents["random_id"] is None:
        del contents["random_id"]
    return kind, text, contents


def queue_unchecked(
    tx: Transaction,
    peer_id: PeerId,
    text: str,
    contents: dict[str, Any],
    *,
    timestamp: int,
    author_id: PeerId | None = None,
) -> MessageId:
    """Write a pending message and its send entry straight into the Postbox, past
    ``enqueue_send``'s checks, as an older client or a bug could: ``contents`` is the
    entry as written (its ``local_id`` is filled in unless given)."""
    message = StoreMessage(
        peer_id,
        int(MessageNamespace.LOCAL),
        None,
        timestamp,
        flags=int(MessageFlags.UNSENT),
        author_id=author_id,
        text=text,
    )
    ensure_listed(tx, (peer_id,))
    (index,) = tx.add_messages([message])
    tx.add_operation_log_entry(peer_id, SEND_TAG, {"local_id": index.id.id, **contents})
    return index.id


def _own_messages(tx: Transaction, peer: PeerId) -> list[MessageId]:
    messages = tx.get_messages(peer, CLOUD, limit=30, newest_first=True)
    return [m.id for m in messages if not m.flags & MessageFlags.INCOMING]
