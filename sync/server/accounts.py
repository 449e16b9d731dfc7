"""The server's accounts: every user of the dataset can log in, each into a box of its own.

Telegram keeps one message box per user for private chats and basic groups: a message
between two users is stored once in each box, under each box's own ids and ``pts``. Here
the dataset's owner (the *primary* account) has the box the dataset was imported into;
any other user gets a box the first time it logs in, filled with the chats it shares
with the primary account (``sync.server.account_boxes.derive_box``).

Every box tells ``Accounts`` of each change it makes (``ServerStore.observe``).
``mirror`` then makes the same change in every other box that holds the chat: a new
message in a private chat between two accounts or in a group enters each participant's
box (and ``pts``), an edit or a deletion reaches every copy, a read comes back to the
other side as an outbox read, and a rename or a presence reaches every box that knows
the peer. Channels and secret chats stay in the box that has them. ``mirror`` returns
the pushes each account's sessions are owed.

Tokens: the primary account's is the server's token; every other user's is derived from
a secret kept in the primary box (``token_for``), written to a tokens file on request
and never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from sync.protocol import (
    AnyUpdate,
    AnyUpdates,
    Message,
    PeerKind,
    PresenceStatus,
    UpdateDeleteMessages,
    UpdateEditMessage,
    UpdateNewMessage,
    UpdatePeer,
    UpdateReadHistoryInbox,
    Updates,
    UpdateUserStatus,
    peer_kind,
)
from sync.server.account_boxes import (
    SELF_FLAG,
    copy_peers,
    derive_box,
    ensure_dialog,
    has_dialog,
    link_of,
    linked_copy,
    newest_id_within,
    newest_link_upto,
    set_link,
)
from sync.server.pushes import push_for
from sync.server.store import ServerStore

__all__ = ["Accounts", "OpenBox"]

log = logging.getLogger("postbox.server")

#: ``Peer.flags`` of users that are no person: bots.
_BOT_FLAG = 2
_TOKEN_PREFIX = "u"

OpenBox = Callable[[int], ServerStore]


class Accounts:
    """The boxes of the accounts that logged in, keyed by their user id.

    ``open_box(user_id)`` gives a store for a user's box (empty if new); it is called
    for boxes that exist already (``known``) at once and for new accounts on first login.
    ``new_secret`` is the tokens' secret if the primary box keeps none yet (random if
    ``None``; a simulation passes a seeded one, so that its runs replay).
    """

    def __init__(
        self,
        primary: ServerStore,
        *,
        token: str,
        open_box: OpenBox,
        known: tuple[int, ...] = (),
        new_secret: int | None = None,
    ) -> None:
        self.primary = primary
        self.primary_id = primary.self_id
        self._token = token
        self._open_box = open_box
        self._secret = b""
        self._new_secret = new_secret
        self.boxes: dict[int, ServerStore] = {self.primary_id: primary}
        self._pending: list[tuple[int, AnyUpdate]] = []
        self._mirroring = False
        primary.observe(self._observer(self.primary_id))
        for user_id in known:
            self._attach(user_id, open_box(user_id))

    def close(self) -> None:
        """Close every box but the primary one (its owner closes it)."""
        for user_id, box in list(self.boxes.items()):
            if user_id != self.primary_id:
                box.close()
        self.boxes = {self.primary_id: self.primary}

    # -- tokens ------------------------------------------------------------------------

    def users(self) -> list[tuple[int, str]]:
        """(user id, name) of everyone who can log in: the primary account first, then
        the people among its peers (not bots)."""
        rows = self.primary.database.execute(
            "SELECT id, name, flags FROM peers WHERE id < ? ORDER BY id",
            (int(PeerKind.GROUP) << 56,),
        )
        people = [
            (int(peer_id), str(name))
            for peer_id, name, flags in rows
            if peer_kind(peer_id) is PeerKind.USER
            and not flags & (_BOT_FLAG | SELF_FLAG)
            and peer_id != self.primary_id
        ]
        me = self.primary.peer(self.primary_id)
        return [(self.primary_id, me.name if me else "me"), *people]

    def token_for(self, user_id: int) -> str:
        """The token ``user_id`` logs in with."""
        if user_id == self.primary_id:
            return self._token
        mac = hmac.new(self._secret_key(), str(user_id).encode(), hashlib.sha256).hexdigest()
        return f"{_TOKEN_PREFIX}{user_id}-{mac[:32]}"

    def _secret_key(self) -> bytes:
        """The key of the other accounts' tokens, made (and kept in the primary box) the
        first time one is needed."""
        if not self._secret:
            secret = self.primary.meta("account_secret", 0)
            if not secret:
                secret = self._new_secret or secrets.randbits(62) + 1
                self.primary.set_meta("account_secret", secret)
            self._secret = hashlib.sha256(f"{secret}:{self._token}".encode()).digest()
        return self._secret

    def write_tokens(self, path: Path) -> None:
        """Write every account's token to ``path`` (readable by its owner only): one line
        of user id, token and name each."""
        lines = [
            f"{user_id}\t{self.token_for(user_id)}\t{name}\n" for user_id, name in self.users()
        ]
        try:
            path.unlink(missing_ok=True)
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.writelines(lines)
        except OSError as error:
            raise OSError(f"cannot write the accounts file {path}: {error.strerror}") from error

    def authorize(self, token: str) -> int | None:
        """The account ``token`` belongs to, or ``None``."""
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return self.primary_id
        head, _, _ = token.partition("-")
        if not head.startswith(_TOKEN_PREFIX) or not head[1:].isdigit():
            return None
        user_id = int(head[1:])
        if not hmac.compare_digest(token.encode(), self.token_for(user_id).encode()):
            return None
        if not any(user == user_id for user, _ in self.users()):
            return None
        return user_id

    # -- boxes -------------------------------------------------------------------------

    def box(self, account: int) -> ServerStore:
        """The account's box, made (from the chats it shares with the primary account)
        the first time it is asked for."""
        found = self.boxes.get(account)
        if found is not None:
            return found
        box = self._open_box(account)
        if box.is_empty:
            derive_box(self.primary, box, account, self._new_link)
            log.info("account %s: box made with %s chats", account, len(box.chat_sizes()))
        self._attach(account, box)
        return box

    def is_account(self, user_id: int) -> bool:
        """Whether ``user_id`` is an account with a box of its own (so no generated
        traffic speaks for it)."""
        return user_id in self.boxes and user_id != self.primary_id

    def _attach(self, account: int, box: ServerStore) -> None:
        self.boxes[account] = box
        box.observe(self._observer(account))

    def _observer(self, account: int) -> Callable[[AnyUpdate], None]:
        def observe(update: AnyUpdate) -> None:
            if not self._mirroring:
                self._pending.append((account, update))

        return observe

    def _new_link(self) -> int:
        link = self.primary.meta("next_link", 1)
        self.primary.set_meta("next_link", link + 1)
        return link

    # -- mirroring ---------------------------------------------------------------------

    def mirror(self) -> dict[int, list[AnyUpdates]]:
        """Make every change observed since the last call in the other boxes that hold
        it; the pushes each account is owed, in order."""
        owed: dict[int, list[AnyUpdates]] = {}
        if len(self.boxes) < 2:
            self._pending.clear()
            return owed
        pending, self._pending = self._pending, []
        self._mirroring = True
        try:
            for origin, update in pending:
                for account, push in self._mirror_one(origin, update):
                    owed.setdefault(account, []).append(push)
        finally:
            self._mirroring = False
        return owed

    def announce_presence(
        self, user_id: int, status: PresenceStatus, timestamp: int
    ) -> dict[int, list[AnyUpdates]]:
        """Set an account's presence in every other box that knows it (its own box keeps
        none: nobody shows themselves as online); the pushes each account is owed."""
        self._mirroring = True
        try:
            return {
                account: [push]
                for account, push in self._presence(user_id, user_id, status, timestamp)
            }
        finally:
            self._mirroring = False

    def _mirror_one(self, origin: int, update: AnyUpdate) -> list[tuple[int, AnyUpdates]]:
        match update:
            case UpdateNewMessage(message=message):
                return self._new_message(origin, message)
            case UpdateEditMessage(message=message):
                return self._edit(origin, message)
            case UpdateDeleteMessages(peer=peer, ids=ids):
                return self._delete(origin, peer, ids)
            case UpdateReadHistoryInbox(peer=peer, max_id=max_id):
                return self._read(origin, peer, max_id)
            case UpdatePeer(peer=peer):
                return self._rename(origin, peer.id, peer.name)
            case UpdateUserStatus(presence=presence):
                return self._presence(origin, presence.user, presence.status, presence.timestamp)
            case _:  # channels, secret chats and outbox reads stay where they are
                return []

    def _rename(self, origin: int, peer_id: int, name: str) -> list[tuple[int, AnyUpdates]]:
        made: list[tuple[int, AnyUpdates]] = []
        for account, box in self._others(origin):
            if box.peer(peer_id) is not None:
                renamed, seq = box.rename_peer(peer_id, name)
                made.append((account, push_for(box, renamed, seq)))
        return made

    def _presence(
        self, origin: int, user_id: int, status: PresenceStatus, timestamp: int
    ) -> list[tuple[int, AnyUpdates]]:
        """A user's presence in the other boxes that know the user, but the user's own."""
        made: list[tuple[int, AnyUpdates]] = []
        for account, box in self._others(origin):
            if account != user_id and box.peer(user_id) is not None:
                presence = box.set_presence(user_id, status, timestamp)
                made.append((account, Updates((UpdateUserStatus(presence),), (), box.now())))
        return made

    def _others(self, origin: int) -> list[tuple[int, ServerStore]]:
        return [(account, box) for account, box in self.boxes.items() if account != origin]

    def _targets(self, origin: int, chat: int) -> list[tuple[int, ServerStore, int]]:
        """(account, box, the chat there) of every other box that holds ``chat``."""
        if peer_kind(chat) is PeerKind.USER:
            box = self.boxes.get(chat)
            return [] if box is None or chat == origin else [(chat, box, origin)]
        if peer_kind(chat) is PeerKind.GROUP:
            return [(a, box, chat) for a, box in self._others(origin) if has_dialog(box, chat)]
        return []

    def _new_message(self, origin: int, message: Message) -> list[tuple[int, AnyUpdates]]:
        source = self.boxes[origin]
        if source.message(message.peer, message.id) is None:  # rolled back, or gone
            return []
        author = message.author
        if author is None:
            author = origin if message.out else message.peer
        made: list[tuple[int, AnyUpdates]] = []
        for account, box, chat in self._targets(origin, message.peer):
            link = link_of(source, message.peer, message.id)
            if link is None:
                link = self._new_link()
                set_link(source, message.peer, message.id, link)
            reply_to = None
            if message.reply_to is not None:
                replied = link_of(source, message.peer, message.reply_to)
                copy = None if replied is None else linked_copy(box, replied)
                reply_to = None if copy is None else copy[1]
            with box.transaction():
                needed = {chat, author, *source.members(chat)}
                if message.forward is not None:
                    needed.update((message.forward.author, message.forward.channel or 0))
                copy_peers(source, box, needed)
                ensure_dialog(box, chat)
                update = box.add_message(
                    chat,
                    out=author == account,
                    author=author,
                    text=message.text,
                    media=message.media,
                    reply_to=reply_to,
                    forward=message.forward,
                )
                set_link(box, chat, update.message.id, link)
            made.append((account, push_for(box, update)))
        return made

    def _copies(self, origin: int, chat: int, ids: tuple[int, ...]) -> dict[int, list[int]]:
        """The ids of the other boxes' copies of messages ``ids`` of ``chat``, by account."""
        source = self.boxes[origin]
        found: dict[int, list[int]] = {}
        for message_id in ids:
            link = link_of(source, chat, message_id)
            if link is None:
                continue
            for account, box, _ in self._targets(origin, chat):
                copy = linked_copy(box, link)
                if copy is not None:
                    found.setdefault(account, []).append(copy[1])
        return found

    def _edit(self, origin: int, message: Message) -> list[tuple[int, AnyUpdates]]:
        made: list[tuple[int, AnyUpdates]] = []
        for account, box, chat in self._targets(origin, message.peer):
            for copy_id in self._copies(origin, message.peer, (message.id,)).get(account, []):
                current = box.message(chat, copy_id)
                if current is not None and current.text != message.text:
                    made.append(
                        (account, push_for(box, box.edit_message(chat, copy_id, message.text)))
                    )
        return made

    def _delete(self, origin: int, chat: int, ids: tuple[int, ...]) -> list[tuple[int, AnyUpdates]]:
        made: list[tuple[int, AnyUpdates]] = []
        copies = self._copies(origin, chat, ids)
        for account, box, there in self._targets(origin, chat):
            update = box.delete_messages(there, copies.get(account, ()))
            if update is not None:
                made.append((account, push_for(box, update)))
        return made

    def _read(self, origin: int, chat: int, max_id: int) -> list[tuple[int, AnyUpdates]]:
        """The origin read ``chat`` up to ``max_id``: the others' messages it read are
        read in their outboxes."""
        link = newest_link_upto(self.boxes[origin], chat, max_id)
        if link is None:
            return []
        made: list[tuple[int, AnyUpdates]] = []
        for account, box, there in self._targets(origin, chat):
            read_to = newest_id_within(box, there, link)
            if read_to is None:
                continue
            update = box.read_outbox(there, read_to)
            if update is not None:
                made.append((account, push_for(box, update)))
        return made
