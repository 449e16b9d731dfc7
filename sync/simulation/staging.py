"""Clients made ready for the faults the schedule holds for them.

A client to be killed at a crash point first does what leads its engine there
(``prepare_crash_point``). A file to be opened with another account's token gets that
account (``another_account``) and, waiting in it, a message its own account wrote
offline (``queue_offline``); ``file_facts`` is what the other account must leave as it
was.
"""

from __future__ import annotations

import random
from pathlib import Path

from postbox import (
    ChatListViewKey,
    PeerGroupId,
    PeerId,
    PeerNamespace,
    Postbox,
    Transaction,
)
from sync.engine.enqueue import ACCOUNT_PEER_PREFERENCE, enqueue_send
from sync.simulation.world import TOKEN, SimClient, SimServer, pick_contact

__all__ = [
    "another_account",
    "file_facts",
    "file_owner",
    "prepare_crash_point",
    "queue_offline",
]


def prepare_crash_point(
    client: SimClient, point: str, server: SimServer | None, rng: random.Random, date: int
) -> None:
    """What the app does that leads the engine to ``point``: its chat list is on
    screen; on its first start, a profile screen opened (for the media counts), a
    post into a channel the account only reads (refused for good), channel news, or
    new messages (some from people the client has not stored, as min peers). ``date``
    is the server's, for the post."""
    client.show([ChatListViewKey(PeerGroupId.ROOT, count=50)])
    postbox = client.postbox
    if client.starts > 1 or server is None or server.store is None or postbox is None:
        return
    account = server.service.accounts.authorize(client.token)
    if account is None:
        return
    store = server.service.accounts.box(account)
    chats = [PeerId(peer) for peer, _size in store.chat_sizes()]
    channels = [peer for peer in chats if peer.namespace == PeerNamespace.CHANNEL]
    if point.startswith(("profile.", "tag_summaries.")) and chats:
        client.open_profile(rng.choice(chats))
    elif point == "outbound.attempt.given_up" and channels:
        channel, random_id = rng.choice(channels), rng.getrandbits(62)
        author = PeerId(store.self_id)
        postbox.transaction(
            lambda tx: enqueue_send(
                tx, channel, "into a channel", timestamp=date,
                author_id=author, random_id=random_id,
            )
        )  # fmt: skip
    elif point.startswith("state_manager.poll_channels.") and channels:
        server.service.generate(3, "channel_post")
    elif point.startswith("references."):  # some name authors the client has not got
        server.service.generate(8, "message")


def another_account(server: SimServer, token: str) -> tuple[int, str] | None:
    """An account other than ``token``'s, and its token: the owner's contact for the
    owner's file, the owner for anyone else's."""
    accounts = server.service.accounts
    if token != TOKEN:
        return accounts.primary_id, TOKEN
    contact = pick_contact(server)
    if contact is None:
        others = [user for user, _ in accounts.users()[1:]]
        contact = others[0] if others else None
    return None if contact is None else (contact, accounts.token_for(contact))


def queue_offline(
    token: str,
    postbox: Postbox,
    server: SimServer,
    other: int,
    rng: random.Random,
    date: int,
) -> tuple[PeerId, int] | None:
    """A message ``token``'s account wrote while offline, left waiting in its file for
    when the file is opened with ``other``'s token: it must go out as its own account.
    Into a chat both accounts have if there is one, where the other could post it too.
    The chat and the send's random id, or ``None`` with no chat to write to (as in a
    file never synced)."""
    accounts = server.service.accounts
    account = accounts.authorize(token)
    assert account is not None
    # A file never synced knows no chat to write to (``postbox-chat send`` and the
    # compose box need a stored peer), and a synced one is bound to its account.
    if postbox.run(lambda tx: tx.get_preference(ACCOUNT_PEER_PREFERENCE)) != account:
        return None
    own = [
        PeerId(peer)
        for peer, _size in accounts.box(account).chat_sizes()
        if PeerId(peer).namespace in (PeerNamespace.USER, PeerNamespace.GROUP)
    ]
    theirs = {peer for peer, _size in accounts.box(other).chat_sizes()}
    chats = [peer for peer in own if int(peer) in theirs] or own
    if not chats:
        return None
    peer, random_id = rng.choice(chats), rng.getrandbits(62)
    text = f"offline {rng.getrandbits(24):06x}"
    postbox.run(
        lambda tx: enqueue_send(
            tx, peer, text, timestamp=date, author_id=PeerId(account), random_id=random_id
        )
    )
    return peer, random_id


def file_owner(path: Path) -> int | None:
    """The account a client file is bound to (``None``: none synced into it yet, or no
    file). Read with the file's engine stopped."""
    if not path.exists():
        return None
    with Postbox(path, inline=True) as postbox:
        owner = postbox.run(lambda tx: tx.get_preference(ACCOUNT_PEER_PREFERENCE))
    return owner if isinstance(owner, int) else None


def file_facts(tx: Transaction) -> tuple[object, ...]:
    """What a file of one account holds that another account must not change: whose it
    is, its cursor, what waits to be sent and what failed."""
    return (
        tx.get_preference(ACCOUNT_PEER_PREFERENCE),
        tx.get_state(),
        tuple(tx.get_unsent_message_ids()),
        tuple(tx.get_failed_message_ids()),
    )
