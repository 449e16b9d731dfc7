"""The mock server's methods: validated requests in, results and pushes out. No sockets.

``Service.handle`` answers one request for one session, against the box of the account
the session logged in to (``sync.server.accounts``). Changes a request makes are pushed
to the account's other sessions (the requester learns them from the result, as on
Telegram), and to the other accounts that hold a copy; generated traffic happens in the
primary account's box and reaches every session that holds it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sync.protocol import (
    AffectedMessages,
    AnyUpdates,
    Auth,
    Authorization,
    Authorizations,
    DeleteMessages,
    EditMessage,
    ErrorCode,
    ForwardMessages,
    GetAllStickers,
    GetAuthorizations,
    GetChannelDifference,
    GetDialogs,
    GetDifference,
    GetFullPeer,
    GetHistory,
    GetPeerDialogs,
    GetPeers,
    GetSavedGifs,
    GetSentMessages,
    GetState,
    GetStickerSet,
    MediaKind,
    Peer,
    PeerKind,
    Peers,
    PresenceStatus,
    ProtocolError,
    ReadHistory,
    Request,
    ResetAuthorization,
    SaveDraft,
    SendMessage,
    SentMessage,
    SentMessageId,
    SentMessageIds,
    SentMessages,
    SetNotifySettings,
    UpdateDeleteChannelMessages,
    UpdateDeleteMessages,
    UpdateDraftMessage,
    UpdateNewEncryptedMessage,
    UpdateNotifySettings,
    UpdateReadChannelInbox,
    UpdateReadHistoryInbox,
    WireRecord,
    peer_kind,
)
from sync.server import devices
from sync.server.accounts import Accounts, OpenBox
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
    #: The user id of the account the session logged in to (0 before).
    account: int = 0
    #: The device id the client logged in with (0: none given).
    device: int = 0


#: ``publish(account, pushes, exclude)``: push to the account's sessions but ``exclude``.
Publish = Callable[[int, list[AnyUpdates], Session | None], None]
#: The changes answered with ``AffectedMessages``: each takes pts.
_PtsChange = (
    UpdateDeleteMessages
    | UpdateDeleteChannelMessages
    | UpdateReadHistoryInbox
    | UpdateReadChannelInbox
    | UpdateNotifySettings
    | UpdateDraftMessage
)
#: How long an account with a session is said to be online for.
ONLINE_FOR = 86_400
#: ``terminate(account, device)``: close that device's connections.
Terminate = Callable[[int, int], None]


def _no_boxes(user_id: int) -> ServerStore:
    raise StoreError(f"user {user_id} cannot log in on this server", ErrorCode.AUTH_FAILED)


def _require_posting(peer: Peer) -> None:
    """Refuse a message into a broadcast channel the account only reads."""
    if not peer.can_post:
        raise StoreError("only the channel's admins can post", ErrorCode.CHAT_WRITE_FORBIDDEN)


class Service:
    """The server-side logic over the primary account's ``store`` and the boxes of the
    other accounts (``open_box`` makes one); ``publish`` sends pushes out."""

    def __init__(
        self,
        store: ServerStore,
        *,
        token: str,
        seed: int,
        publish: Publish,
        open_box: OpenBox = _no_boxes,
        known_boxes: tuple[int, ...] = (),
        terminate: Terminate = lambda _account, _device: None,
        sessions: Callable[[], Iterable[Session]] = tuple,
        new_secret: int | None = None,
    ) -> None:
        self.store = store
        self.accounts = Accounts(
            store,
            token=token,
            open_box=open_box,
            known=known_boxes,
            new_secret=new_secret,
        )
        self._seed = seed
        store.stickers.ensure_seeded(seed)
        self.traffic = Traffic(store, seed, is_account=self.accounts.is_account)
        self._publish = publish
        self._terminate = terminate
        self._sessions = sessions
        #: The accounts said to be online, and until when.
        self._online_until: dict[int, int] = {}
        self._handlers: dict[type[Any], Callable[[Session, Any], WireRecord]] = {
            Auth: self._auth,
            GetState: lambda s, _p: self.box(s).state(),
            GetDifference: self._get_difference,
            GetChannelDifference: self._get_channel_difference,
            GetDialogs: lambda s, p: self.box(s).dialogs(p),
            GetPeerDialogs: lambda s, p: self.box(s).peer_dialogs(p.peers),
            GetHistory: lambda s, p: self.box(s).history(p),
            GetPeers: self._get_peers,
            GetFullPeer: lambda s, p: self.box(s).full_peer(p.peer),
            SendMessage: self._send_message,
            GetSentMessages: self._get_sent_messages,
            EditMessage: self._edit_message,
            ForwardMessages: self._forward_messages,
            DeleteMessages: self._delete_messages,
            ReadHistory: self._read_history,
            SetNotifySettings: self._set_notify_settings,
            SaveDraft: self._save_draft,
            GetAuthorizations: self._get_authorizations,
            ResetAuthorization: self._reset_authorization,
            GetAllStickers: lambda s, p: self.box(s).stickers.all_stickers(p.hash),
            GetStickerSet: lambda s, p: self.box(s).stickers.sticker_set(p),
            GetSavedGifs: lambda s, p: self.box(s).stickers.saved_gifs(p.hash),
        }

    def handle(self, session: Session, request: Request) -> WireRecord:
        """The result of ``request``; a ``ProtocolError`` becomes the error frame."""
        params = request.params
        if not session.authorized and not isinstance(params, Auth):
            raise ProtocolError("authorize with the auth method first", ErrorCode.AUTH_REQUIRED)
        try:
            result = self._handlers[type(params)](session, params)
            self._keep_online(session.account)
            return result
        finally:
            self._deliver_mirrored()

    def _keep_online(self, account: int) -> None:
        """An account with a session is online to the other accounts (until its last
        session ends: a client here has no status requests to renew it with)."""
        if len(self.accounts.boxes) < 2 or account in self._online_until:
            return
        until = self.store.now() + ONLINE_FOR
        self._online_until[account] = until
        self._announce(account, PresenceStatus.ONLINE, until)

    def _announce(self, account: int, status: PresenceStatus, timestamp: int) -> None:
        for other, pushes in self.accounts.announce_presence(account, status, timestamp).items():
            self._publish(other, pushes, None)

    def session_ended(self, session: Session) -> None:
        """A connection closed: its account goes offline if it was the last one."""
        if not session.authorized or session.account not in self._online_until:
            return
        if any(s.account == session.account for s in self._sessions() if s is not session):
            return
        del self._online_until[session.account]
        self._announce(session.account, PresenceStatus.OFFLINE, self.store.now())

    def box(self, session: Session) -> ServerStore:
        """The box of the account ``session`` logged in to."""
        return self.accounts.boxes[session.account]

    def generate(self, events: int = 1, kind: str | None = None) -> int:
        """Make ``events`` traffic events (of ``kind`` if given, see ``EVENT_WEIGHTS``) and
        push them; the number of pushes made."""
        made = 0
        for _ in range(events):
            pushes = self.traffic.step(kind)
            made += len(pushes)
            if pushes:
                self._publish(self.accounts.primary_id, pushes, None)
            self._deliver_mirrored()
        return made

    def say(self, peer_id: int, *, push: bool = True) -> int | None:
        """Someone writes in the primary account's chat ``peer_id`` now; the id, or
        ``None`` if nobody can. ``push=False`` stores it without telling any device, as
        when the account's connections are down."""
        update = self.traffic.message_in(peer_id)
        if update is None:
            return None
        if push:
            pushes = [push_for(self.store, update)]
            pushes += self.traffic.writers_online(pushes)
            self._publish(self.accounts.primary_id, pushes, None)
        self._deliver_mirrored()
        return update.message.id

    def remove_from_channel(self, channel: int) -> bool:
        """The primary account is removed from ``channel`` (an admin kicked it): pushed
        to its devices as ``updateChannel``; whether it was in that channel."""
        update = self.store.leave_channel(channel)
        if update is None:
            return False
        self.traffic.forget_chat(channel)
        self._publish(self.accounts.primary_id, [push_for(self.store, update)], None)
        self._deliver_mirrored()
        return True

    def set_contact_elsewhere(self, user_id: int, contact: bool) -> bool:
        """The primary account adds ``user_id`` to its contacts (or removes them) on a
        device that is not connected here; every session learns it. Whether that changed
        anything."""
        update = self.store.set_contact(user_id, contact)
        if update is None:
            return False
        self._publish(self.accounts.primary_id, [push_for(self.store, update)], None)
        self._deliver_mirrored()
        return True

    def read_elsewhere(self, peer_id: int) -> bool:
        """The primary account reads all of ``peer_id`` on a device that is not connected
        here; whether that changed anything."""
        update = self.store.read_inbox(peer_id, 2**31 - 1)
        if update is None:
            return False
        self._publish(self.accounts.primary_id, [push_for(self.store, update)], None)
        self._deliver_mirrored()
        return True

    def _deliver_mirrored(self) -> None:
        for account, pushes in self.accounts.mirror().items():
            self._publish(account, pushes, None)

    # -- methods ---------------------------------------------------------------------

    def _auth(self, session: Session, params: Auth) -> Authorization:
        account = self.accounts.authorize(params.token)
        if account is None:
            session.auth_failures += 1
            log.warning("connection %s (%s): wrong token", session.number, session.peer_name)
            raise ProtocolError("the token is not valid", ErrorCode.AUTH_FAILED)
        box = self.accounts.box(account)
        box.stickers.ensure_seeded(self._seed)
        devices.check_in(box, params.device, params.device_name)
        session.authorized, session.account, session.device = True, account, params.device
        me = box.peer(account)
        assert me is not None
        log.info("connection %s (%s): authorized as %s", session.number, session.peer_name, account)
        return Authorization(me)

    def _get_authorizations(self, session: Session, _params: GetAuthorizations) -> Authorizations:
        online = {s.device for s in self._sessions() if s.account == session.account}
        return devices.sessions(self.box(session), session.device, online)

    def _reset_authorization(self, session: Session, params: ResetAuthorization) -> Authorizations:
        self.revoke(session.account, params.device, asking=session.device)
        return self._get_authorizations(session, GetAuthorizations())

    def revoke(self, account: int, device: int, *, asking: int = 0) -> None:
        """Terminate a device's session: it is refused from now on, and its connections
        are closed."""
        devices.revoke(self.accounts.box(account), device, asking=asking)
        log.info("account %s: the session of device %s was terminated", account, device)
        self._terminate(account, device)

    def _get_difference(self, session: Session, params: GetDifference) -> WireRecord:
        forced = session.faults.difference_too_long or params.pts < session.faults.too_long_below
        session.faults.difference_too_long = False
        return self.box(session).difference(params, force_too_long=forced)

    def _get_channel_difference(self, session: Session, params: GetChannelDifference) -> WireRecord:
        self.box(session).require_member(params.channel)
        forced = params.channel in session.faults.channels_too_long
        session.faults.channels_too_long.discard(params.channel)
        timeout = session.faults.config.channel_timeout or None
        return self.box(session).channel_difference(params, force_too_long=forced, timeout=timeout)

    def _get_peers(self, session: Session, params: GetPeers) -> Peers:
        box = self.box(session)
        return Peers(box.peers(params.ids), box.presences(params.ids))

    def _send_message(self, session: Session, params: SendMessage) -> SentMessage:
        store = self.box(session)
        earlier = store.sent_before(params.random_id)
        if earlier is not None:
            message, pts, pts_count = earlier
            if message.peer != params.peer:
                raise ProtocolError(
                    "random_id was already used for another chat", ErrorCode.INVALID_PARAMS
                )
            return SentMessage(message, pts, pts_count)
        if not params.text.strip() and not params.media:
            raise ProtocolError("the message is empty", ErrorCode.MESSAGE_EMPTY)
        store.require_member(params.peer)
        _require_posting(store.require_peer(params.peer))
        if params.reply_to is not None and store.message(params.peer, params.reply_to) is None:
            raise StoreError(
                f"no message {params.reply_to} to reply to", ErrorCode.MESSAGE_ID_INVALID
            )
        media = store.stickers.checked_media(params.media, params.text)
        update = store.add_message(
            params.peer,
            out=True,
            author=store.self_id,
            text=params.text,
            media=media,
            reply_to=params.reply_to,
            random_id=params.random_id,
        )
        self._publish(session.account, [push_for(store, update)], session)
        if isinstance(update, UpdateNewEncryptedMessage):
            return SentMessage(update.message, update.qts, 1)
        return SentMessage(update.message, update.pts, update.pts_count)

    def _get_sent_messages(self, session: Session, params: GetSentMessages) -> SentMessageIds:
        store = self.box(session)
        found = []
        for random_id in params.random_ids:
            earlier = store.sent_before(random_id)
            if earlier is not None:
                found.append(SentMessageId(random_id, earlier[0].peer, earlier[0].id))
        return SentMessageIds(tuple(found))

    def _edit_message(self, session: Session, params: EditMessage) -> SentMessage:
        store = self.box(session)
        store.require_member(params.peer)
        current = store.message(params.peer, params.id)
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
        update = store.edit_message(params.peer, params.id, params.text)
        self._publish(session.account, [push_for(store, update)], session)
        return SentMessage(update.message, update.pts, update.pts_count)

    def _forward_messages(self, session: Session, params: ForwardMessages) -> SentMessages:
        """Copies of the messages in the target chat, each with the header of where it
        first appeared; all or none are stored, and a repeat returns the same copies."""
        store = self.box(session)
        if not params.ids:
            raise StoreError("no messages to forward", ErrorCode.MESSAGE_ID_INVALID)
        if len(params.ids) != len(params.random_ids):
            raise ProtocolError("each id needs its own random_id", ErrorCode.INVALID_PARAMS)
        earlier = [store.sent_before(random_id) for random_id in params.random_ids]
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
            store.require_peer(peer_id)
            store.require_member(peer_id)
            if peer_kind(peer_id) is PeerKind.SECRET:
                raise StoreError(
                    f"messages of secret chats are not forwarded {role} them",
                    ErrorCode.PEER_ID_INVALID,
                )
        _require_posting(store.require_peer(params.to_peer))
        sources = []
        for message_id in params.ids:
            source = store.message(params.from_peer, message_id)
            if source is None:
                raise StoreError(
                    f"no message {message_id} in chat {params.from_peer} to forward",
                    ErrorCode.MESSAGE_ID_INVALID,
                )
            sources.append(source)
        with store.transaction():
            updates = [
                store.add_message(
                    params.to_peer,
                    out=True,
                    author=store.self_id,
                    text=source.text,
                    media=source.media,
                    forward=forward_header(source),
                    random_id=random_id,
                )
                for source, random_id in zip(sources, params.random_ids, strict=True)
            ]
        self._publish(session.account, [push_for(store, update) for update in updates], session)
        last = updates[-1]
        assert not isinstance(last, UpdateNewEncryptedMessage)  # refused above
        return SentMessages(tuple(update.message for update in updates), last.pts, len(updates))

    @staticmethod
    def _current_pts(store: ServerStore, peer_id: int) -> int:
        if peer_kind(peer_id) is PeerKind.CHANNEL:
            return store.dialog(peer_id).pts or 0
        return store.state().pts

    def _delete_messages(self, session: Session, params: DeleteMessages) -> AffectedMessages:
        store = self.box(session)
        if peer_kind(params.peer) is PeerKind.CHANNEL:
            raise StoreError(
                "only the channel's admins can delete posts", ErrorCode.PEER_ID_INVALID
            )
        return self._affected(
            session, store, params.peer, store.delete_messages(params.peer, params.ids)
        )

    def _read_history(self, session: Session, params: ReadHistory) -> AffectedMessages:
        store = self.box(session)
        return self._affected(
            session, store, params.peer, store.read_inbox(params.peer, params.max_id)
        )

    def _set_notify_settings(self, session: Session, params: SetNotifySettings) -> AffectedMessages:
        store = self.box(session)
        update = store.set_notify_settings(params.peer, params.muted_until)
        return self._affected(session, store, None, update)

    def _save_draft(self, session: Session, params: SaveDraft) -> AffectedMessages:
        store = self.box(session)
        update = store.save_draft(params.peer, params.text, params.reply_to)
        return self._affected(session, store, None, update)

    def _affected(
        self, session: Session, store: ServerStore, peer: int | None, update: _PtsChange | None
    ) -> AffectedMessages:
        """The answer to a change that takes pts: pushed to the account's other sessions;
        with nothing changed, the counter where it stands (the channel's if ``peer`` is a
        channel, else the account's)."""
        if update is None:
            pts = store.state().pts if peer is None else self._current_pts(store, peer)
            return AffectedMessages(pts, 0)
        self._publish(session.account, [push_for(store, update)], session)
        return AffectedMessages(update.pts, update.pts_count)
