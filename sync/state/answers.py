"""What a server's answer may say, and what to do about the peers it names.

The line the protocol draws (docs/protocol.md): a message may name a peer the client has
not received yet, as Telegram's "min" peers: its chat, author or forward source left out
of the answer's peers. That is legal; the client asks ``getPeers`` for it before storing
the answer. A peer the server cannot describe when asked, or a field of the wrong kind
(a channel's update about a private chat, an id whose top byte names no kind of peer), is
a lie: the whole answer is refused with ``ServerLiedError`` and nothing of it is stored.

``check_message``, ``check_update`` and ``check_peers`` find the wrong kinds;
``referenced_peers`` lists what messages name; ``PeerLookups`` decides, on a clock passed
in, which unknown peers to ask for and which to refuse at once because the server could
not describe them a moment ago (asking again only after a doubling pause).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sync.protocol import (
    AnyUpdate,
    ChannelPts,
    Dialog,
    ErrorCode,
    Message,
    Peer,
    PeerKind,
    ProtocolError,
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

__all__ = [
    "ACCOUNT_CHATS",
    "LIE_PAUSE_MAX",
    "LIE_PAUSE_MIN",
    "PEERS_PER_REQUEST",
    "LookupPlan",
    "PeerLookups",
    "ServerLiedError",
    "check_dialogs",
    "check_message",
    "check_peers",
    "check_update",
    "referenced_peers",
]

#: The chats whose messages and reads the account's pts orders.
ACCOUNT_CHATS = frozenset({PeerKind.USER, PeerKind.GROUP})
#: Who may author a message or be named as a forward's author.
_AUTHORS = frozenset({PeerKind.USER, PeerKind.CHANNEL, PeerKind.GROUP})
#: Most ids one ``getPeers`` takes.
PEERS_PER_REQUEST = 200
#: After the server could not describe a peer: seconds before it is asked again (doubling
#: with each further refusal up to the maximum); meanwhile answers naming it are refused.
LIE_PAUSE_MIN = 5.0
LIE_PAUSE_MAX = 600.0


class ServerLiedError(ProtocolError):
    """An answer that breaks the protocol's own rules: refused whole, nothing stored."""

    code = ErrorCode.INVALID_PARAMS


def _kind_is(peer_id: int, kinds: Iterable[PeerKind], what: str) -> None:
    kind = peer_kind(peer_id)
    if kind is None or kind not in kinds:
        named = "no kind" if kind is None else kind.name.lower()
        raise ServerLiedError(f"{what} {peer_id} is a peer of {named}")


def check_message(message: Message, chats: Iterable[PeerKind], where: str) -> None:
    """A message in a chat of one of ``chats``' kinds, by an author who may write."""
    _kind_is(message.peer, chats, f"{where}: the chat of message {message.id}")
    if message.author is not None:
        _kind_is(message.author, _AUTHORS, f"{where}: the author of message {message.id}")
    forward = message.forward
    if forward is not None:
        _kind_is(forward.author, _AUTHORS, f"{where}: the forward author of message {message.id}")
        if forward.channel is not None:
            _kind_is(forward.channel, (PeerKind.CHANNEL,), f"{where}: the forward source")


def check_update(update: AnyUpdate, where: str = "an update") -> None:
    """``update`` names peers of the kinds its counter orders; ``ServerLiedError`` if not."""
    channel = (PeerKind.CHANNEL,)
    account_chats = (*ACCOUNT_CHATS, PeerKind.SECRET)
    match update:
        case UpdateNewMessage() | UpdateEditMessage():
            check_message(update.message, ACCOUNT_CHATS, where)
        case UpdateNewChannelMessage() | UpdateEditChannelMessage():
            check_message(update.message, channel, where)
        case UpdateNewEncryptedMessage():
            check_message(update.message, (PeerKind.SECRET,), where)
        case UpdateDeleteChannelMessages() | UpdateReadChannelInbox() | UpdateChannelTooLong():
            _kind_is(update.channel, channel, f"{where}: channel")
        case UpdateDeleteMessages() | UpdateReadHistoryInbox() | UpdateReadHistoryOutbox():
            _kind_is(update.peer, account_chats, f"{where}: chat")
        case UpdateNotifySettings() | UpdateDraftMessage():
            _kind_is(update.peer, (*account_chats, PeerKind.CHANNEL), f"{where}: chat")
        case UpdateContact():
            _kind_is(update.peer, (PeerKind.USER,), f"{where}: contact")
        case UpdateUserStatus():
            _kind_is(update.presence.user, (PeerKind.USER,), f"{where}: user")
        case UpdatePeer():
            check_peers((update.peer,), where)


def check_peers(peers: Iterable[Peer], where: str, hints: Iterable[ChannelPts] = ()) -> None:
    """Peer records whose ids name a kind, and channel hints that name channels."""
    for peer in peers:
        _kind_is(peer.id, tuple(PeerKind), f"{where}: peer")
    for hint in hints:
        _kind_is(hint.channel, (PeerKind.CHANNEL,), f"{where}: channel hint")


def check_dialogs(
    dialogs: Iterable[Dialog], messages: Iterable[Message], peers: Iterable[Peer], where: str
) -> None:
    """A chat-list page: dialogs of peers with a kind (a pts for a channel only), each
    message the top message of one of them; ``ServerLiedError`` if not."""
    check_peers(peers, where)
    tops: dict[tuple[int, int], PeerKind] = {}
    for dialog in dialogs:
        _kind_is(dialog.peer, tuple(PeerKind), f"{where}: the dialog of")
        kind = peer_kind(dialog.peer)
        assert kind is not None
        if dialog.pts is not None and kind is not PeerKind.CHANNEL:
            raise ServerLiedError(f"{where}: the dialog of {dialog.peer} has pts {dialog.pts}")
        tops[(dialog.peer, dialog.top_message)] = kind
    for message in messages:
        kind = tops.get((message.peer, message.id))
        if kind is None:
            raise ServerLiedError(f"{where}: message {message.id} of {message.peer} tops no dialog")
        check_message(message, (kind,), where)


def referenced_peers(messages: Iterable[Message]) -> set[int]:
    """The peers a client needs to show ``messages``: chats, authors, forward sources."""
    ids: set[int] = set()
    for message in messages:
        ids.add(message.peer)
        if message.author is not None:
            ids.add(message.author)
        if message.forward is not None:
            ids.add(message.forward.author)
            if message.forward.channel is not None:
                ids.add(message.forward.channel)
    return ids


@dataclass(frozen=True, slots=True)
class LookupPlan:
    """What to do about an answer's unknown peers: ask for ``fetch`` (in batches of at
    most ``PEERS_PER_REQUEST``), or refuse the answer at once for ``refuse``."""

    fetch: tuple[int, ...]
    refuse: tuple[int, ...]


@dataclass(slots=True)
class PeerLookups:
    """Peers the server could not describe, each with when it may be asked again."""

    pause_min: float = LIE_PAUSE_MIN
    pause_max: float = LIE_PAUSE_MAX
    #: peer id -> (the time it may be asked again, the pause that led there).
    _refused: dict[int, tuple[float, float]] = field(default_factory=dict)

    def plan(self, unknown: Iterable[int], now: float) -> LookupPlan:
        """Which of ``unknown`` (named, neither carried nor stored) to ask for now, and
        which the server could not describe so recently that the answer is refused."""
        fetch: list[int] = []
        refuse: list[int] = []
        for peer_id in sorted(set(unknown)):
            refused = self._refused.get(peer_id)
            (refuse if refused is not None and now < refused[0] else fetch).append(peer_id)
        return LookupPlan(tuple(fetch), tuple(refuse))

    def answered(self, asked: Iterable[int], described: Iterable[int], now: float) -> set[int]:
        """The server described ``described`` of ``asked``; the ones it could not (a
        lie, unless empty). Each of them waits a doubled pause before it is asked again."""
        known = set(described)
        missing = set(asked) - known
        for peer_id in known:
            self._refused.pop(peer_id, None)
        for peer_id in missing:
            previous = self._refused.get(peer_id)
            pause = self.pause_min if previous is None else min(previous[1] * 2, self.pause_max)
            self._refused[peer_id] = (now + pause, pause)
        return missing

    def waiting(self) -> dict[int, float]:
        """Each peer refused, with when it may be asked again."""
        return {peer_id: until for peer_id, (until, _) in self._refused.items()}
