"""The mock server's methods: validated requests in, results and pushes out. No sockets.

``Service.handle`` answers one request for one session. Changes a request makes are
pushed to the account's other sessions (the requester learns them from the result, as
on Telegram); generated traffic is pushed to every session.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sync.protocol import (
    AffectedMessages,
    AnyUpdates,
    Auth,
    Authorization,
    DeleteMessages,
    EditMessage,
    ErrorCode,
    ForwardMessages,
    GetAllStickers,
    GetChannelDifference,
    GetDialogs,
    GetDifference,
    GetFullPeer,
    GetHistory,
    GetPeerDialogs,
    GetPeers,
    GetSavedGifs,
    GetState,
    GetStickerSet,
    MediaKind,
    PeerKind,
    Peers,
    ProtocolError,
    ReadHistory,
    Request,
    SendMessage,
    SentMessage,
    SentMessages,
    UpdateNewEncryptedMessage,
    WireRecord,
    peer_kind,
)
from sync.server.faults import FaultInjector
from sync.server.pushes import push_for
from sync.server.store import ServerStore, StoreError, forward_header
from sync.server.traffic import Traffic

__all__ = ["Service", "Session"]

log = logging.getLogger("postbox.server")


@dataclass(slots=True)
class Session:
    """One connection's standing with the server."""

    number: int
    faults: FaultInjector
    authorized: bool = False
    auth_failures: int = 0
    peer_name: str = ""


Publish = Callable[[list[AnyUpdates], Session | None], None]


class Service:
    """One account's server-side logic over ``store``; ``publish`` sends pushes out."""

    def __init__(self, store: ServerStore, *, token: str, seed: int, publish: Publish) -> None:
        self.store = store
        self._token = token.encode()
        store.stickers.ensure_seeded(seed)
        self.traffic = Traffic(store, seed)
        self._publish = publish
        self._handlers: dict[type[Any], Callable[[Session, Any], WireRecord]] = {
            Auth: self._auth,
            GetState: lambda _s, _p: store.state(),
            GetDifference: self._get_difference,
            GetChannelDifference: self._get_channel_difference,
            GetDialogs: lambda _s, p: store.dialogs(p),
            GetPeerDialogs: lambda _s, p: store.peer_dialogs(p.peers),
            GetHistory: lambda _s, p: store.history(p),
            GetPeers: self._get_peers,
            GetFullPeer: lambda _s, p: store.full_peer(p.peer),
            SendMessage: self._send_message,
            EditMessage: self._edit_message,
            ForwardMessages: self._forward_messages,
            DeleteMessages: self._delete_messages,
            ReadHistory: self._read_history,
            GetAllStickers: lambda _s, p: store.stickers.all_stickers(p.hash),
            GetStickerSet: lambda _s, p: store.stickers.sticker_set(p),
            GetSavedGifs: lambda _s, p: store.stickers.saved_gifs(p.hash),
        }

    def handle(self, session: Session, request: Request) -> WireRecord:
        """The result of ``request``; a ``ProtocolError`` becomes the error frame."""
        params = request.params
        if not session.authorized and not isinstance(params, Auth):
            raise ProtocolError("authorize with the auth method first", ErrorCode.AUTH_REQUIRED)
        return self._handlers[type(params)](session, params)

    def generate(self, events: int = 1, kind: str | None = None) -> int:
        """Make ``events`` traffic events (of ``kind`` if given, see ``EVENT_WEIGHTS``) and
        push them; the number of pushes made."""
        made = 0
        for _ in range(events):
            pushes = self.traffic.step(kind)
            made += len(pushes)
            if pushes:
                self._publish(pushes, None)
        return made

    # -- methods ---------------------------------------------------------------------

    def _auth(self, session: Session, params: Auth) -> Authorization:
        if not hmac.compare_digest(params.token.encode(), self._token):
            session.auth_failures += 1
            log.warning("connection %s (%s): wrong token", session.number, session.peer_name)
            raise ProtocolError("the token is not valid", ErrorCode.AUTH_FAILED)
        session.authorized = True
        me = self.store.peer(self.store.self_id)
        assert me is not None
        log.info("connection %s (%s): authorized", session.number, session.peer_name)
        return Authorization(me)

    def _get_difference(self, session: Session, params: GetDifference) -> WireRecord:
        forced = session.faults.difference_too_long
        session.faults.difference_too_long = False
        return self.store.difference(params, force_too_long=forced)

    def _get_channel_difference(self, session: Session, params: GetChannelDifference) -> WireRecord:
        forced = params.channel in session.faults.channels_too_long
        session.faults.channels_too_long.discard(params.channel)
        return self.store.channel_difference(params, force_too_long=forced)

    def _get_peers(self, _session: Session, params: GetPeers) -> Peers:
        return Peers(self.store.peers(params.ids), self.store.presences(params.ids))

    def _send_message(self, session: Session, params: SendMessage) -> SentMessage:
        earlier = self.store.sent_before(params.random_id)
        if earlier is not None:
            message, pts, pts_count = earlier
            if message.peer != params.peer:
                raise ProtocolError(
                    "random_id was already used for another chat", ErrorCode.INVALID_PARAMS
                )
            return SentMessage(message, pts, pts_count)
        if not params.text.strip() and not params.media:
            raise ProtocolError("the message is empty", ErrorCode.MESSAGE_EMPTY)
        self.store.require_peer(params.peer)
        if peer_kind(params.peer) is PeerKind.CHANNEL:
            raise StoreError("only the channel's admins can post", ErrorCode.PEER_ID_INVALID)
        if params.reply_to is not None and self.store.message(params.peer, params.reply_to) is None:
            raise StoreError(
                f"no message {params.reply_to} to reply to", ErrorCode.MESSAGE_ID_INVALID
            )
        media = self.store.stickers.checked_media(params.media, params.text)
        update = self.store.add_message(
            params.peer,
            out=True,
            author=self.store.self_id,
            text=params.text,
            media=media,
            reply_to=params.reply_to,
            random_id=params.random_id,
        )
        self._publish([push_for(self.store, update)], session)
        if isinstance(update, UpdateNewEncryptedMessage):
            return SentMessage(update.message, update.qts, 1)
        return SentMessage(update.message, update.pts, update.pts_count)

    def _edit_message(self, session: Session, params: EditMessage) -> SentMessage:
        current = self.store.message(params.peer, params.id)
        if current is None or not current.out:
            raise StoreError(
                f"no message {params.id} of ours in chat {params.peer}",
                ErrorCode.MESSAGE_ID_INVALID,
            )
        if current.forward is not None:
            raise StoreError("a forwarded message cannot be edited", ErrorCode.MESSAGE_ID_INVALID)
        if any(item.kind is MediaKind.STICKER for item in current.media):
            raise StoreError("a sticker cannot be edited", ErrorCode.MESSAGE_ID_INVALID)
        if not params.text.strip() and not current.media:
            raise ProtocolError("the message would be empty", ErrorCode.MESSAGE_EMPTY)
        update = self.store.edit_message(params.peer, params.id, params.text)
        self._publish([push_for(self.store, update)], session)
        return SentMessage(update.message, update.pts, update.pts_count)

    def _forward_messages(self, session: Session, params: ForwardMessages) -> SentMessages:
        """Copies of the messages in the target chat, each with the header of where it
        first appeared; all or none are stored, and a repeat returns the same copies."""
        if not params.ids:
            raise StoreError("no messages to forward", ErrorCode.MESSAGE_ID_INVALID)
        if len(params.ids) != len(params.random_ids):
            raise ProtocolError("each id needs its own random_id", ErrorCode.INVALID_PARAMS)
        earlier = [self.store.sent_before(random_id) for random_id in params.random_ids]
        if any(found is not None for found in earlier):
            if any(found is None or found[0].peer != params.to_peer for found in earlier):
                raise ProtocolError(
                    "random_ids were already used for another send", ErrorCode.INVALID_PARAMS
                )
            sent = [found for found in earlier if found is not None]
            return SentMessages(
                tuple(message for message, _, _ in sent), max(pts for _, pts, _ in sent), len(sent)
            )
        for peer_id, role in ((params.from_peer, "from"), (params.to_peer, "into")):
            self.store.require_peer(peer_id)
            if peer_kind(peer_id) is PeerKind.SECRET:
                raise StoreError(
                    f"messages of secret chats are not forwarded {role} them",
                    ErrorCode.PEER_ID_INVALID,
                )
        if peer_kind(params.to_peer) is PeerKind.CHANNEL:
            raise StoreError("only the channel's admins can post", ErrorCode.PEER_ID_INVALID)
        sources = []
        for message_id in params.ids:
            source = self.store.message(params.from_peer, message_id)
            if source is None:
                raise StoreError(
                    f"no message {message_id} in chat {params.from_peer} to forward",
                    ErrorCode.MESSAGE_ID_INVALID,
                )
            sources.append(source)
        with self.store.transaction():
            updates = [
                self.store.add_message(
                    params.to_peer,
                    out=True,
                    author=self.store.self_id,
                    text=source.text,
                    media=source.media,
                    forward=forward_header(source),
                    random_id=random_id,
                )
                for source, random_id in zip(sources, params.random_ids, strict=True)
            ]
        self._publish([push_for(self.store, update) for update in updates], session)
        last = updates[-1]
        assert not isinstance(last, UpdateNewEncryptedMessage)  # refused above
        return SentMessages(tuple(update.message for update in updates), last.pts, len(updates))

    def _current_pts(self, peer_id: int) -> int:
        if peer_kind(peer_id) is PeerKind.CHANNEL:
            return self.store.dialog(peer_id).pts or 0
        return self.store.state().pts

    def _delete_messages(self, session: Session, params: DeleteMessages) -> AffectedMessages:
        if peer_kind(params.peer) is PeerKind.CHANNEL:
            raise StoreError(
                "only the channel's admins can delete posts", ErrorCode.PEER_ID_INVALID
            )
        update = self.store.delete_messages(params.peer, params.ids)
        if update is None:
            return AffectedMessages(self._current_pts(params.peer), 0)
        self._publish([push_for(self.store, update)], session)
        return AffectedMessages(update.pts, update.pts_count)

    def _read_history(self, session: Session, params: ReadHistory) -> AffectedMessages:
        update = self.store.read_inbox(params.peer, params.max_id)
        if update is None:
            return AffectedMessages(self._current_pts(params.peer), 0)
        self._publish([push_for(self.store, update)], session)
        return AffectedMessages(update.pts, update.pts_count)
