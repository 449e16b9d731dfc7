"""Every committed send reaches the server exactly once, or is shown as failed.

``verify`` compares what a client holds with the server and so cannot see a queued
message that vanished from both, nor a send the server stored twice under two random
ids (the client then holds both copies, as the server does). ``SendLedger`` remembers
each send whose transaction committed, taken from each client's commits whoever queued
it (its chat, local id and ``random_id``); at the end of a schedule ``check_sends``
holds the ledger against the server's record of sends (its ``sent_messages``, one row
per random id) and each client's messages:

- a committed send is on the server exactly once, or its message is failed in the
  client, or the user deleted it before it was sent (then it may be absent, or have
  arrived while the deletion was under way), or it forwards a message the server no
  longer has (the queue drops such a forward);
- every send the server stored was committed by a client of that account.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from postbox import (
    ChangeRecord,
    MessageFlags,
    MessageId,
    MessageNamespace,
    PeerId,
    Transaction,
)
from sync.engine.log_tags import SEND_TAG

__all__ = ["CommittedSend", "LocalFate", "SendLedger", "check_sends", "local_fates"]

_LOCAL = int(MessageNamespace.LOCAL)


@dataclass(frozen=True, slots=True)
class CommittedSend:
    """A send whose transaction committed at client ``client``; ``random_id`` is
    ``None`` when the entry carried none a server could take."""

    client: int
    peer_id: PeerId
    local_id: int
    random_id: int | None
    #: The (peer, id) a forward copies.
    source: tuple[int, int] | None = None


class LocalFate:
    """What became of a send's local message in its client, at the end."""

    FAILED = "failed"
    PENDING = "pending"
    GONE = "gone"


@dataclass
class SendLedger:
    sends: list[CommittedSend] = field(default_factory=list)
    #: (client, peer, local id) of the sends the user deleted before they were sent.
    withdrawn: set[tuple[int, PeerId, int]] = field(default_factory=set)
    _seen: set[CommittedSend] = field(default_factory=set)

    def record_commit(self, client: int, record: ChangeRecord) -> None:
        """Record the send entries a commit of client ``client`` added (a commit
        listener's work: it sees only what did commit)."""
        for (peer_id, tag), operations in record.operation_log_operations.items():
            if tag == SEND_TAG:
                for operation in operations:
                    if operation.action == "add":
                        self.committed(client, peer_id, operation.entry.contents)

    def committed(self, client: int, peer_id: PeerId, contents: object) -> None:
        """Record the send entry ``contents``, as it was committed for ``peer_id`` (once:
        a retry queues the same entry again)."""
        if not isinstance(contents, dict) or type(contents.get("local_id")) is not int:
            return  # names no message: nothing to show, failed or sent
        random_id = contents.get("random_id")
        valid = type(random_id) is int and -(2**63) <= random_id < 2**63
        forward = contents.get("forward")
        source = None
        if isinstance(forward, list | tuple) and all(type(part) is int for part in forward):
            source = (forward[0], forward[1]) if len(forward) == 2 else None
        send = CommittedSend(
            client, peer_id, contents["local_id"], random_id if valid else None, source
        )
        if send not in self._seen:
            self._seen.add(send)
            self.sends.append(send)

    def withdraw(self, client: int, message_id: MessageId) -> None:
        if message_id.namespace == _LOCAL:
            self.withdrawn.add((client, message_id.peer_id, message_id.id))


def local_fates(tx: Transaction, sends: Iterable[CommittedSend]) -> dict[tuple[PeerId, int], str]:
    """Each send's local message: failed, still pending, or gone (sent and replaced by
    the server's, or deleted)."""
    fates: dict[tuple[PeerId, int], str] = {}
    for send in sends:
        message = tx.get_message(MessageId(send.peer_id, _LOCAL, send.local_id))
        if message is None:
            fate = LocalFate.GONE
        elif message.flags & MessageFlags.FAILED:
            fate = LocalFate.FAILED
        else:
            fate = LocalFate.PENDING
        fates[(send.peer_id, send.local_id)] = fate
    return fates


def check_sends(
    ledger: SendLedger,
    accounts: Mapping[int, int],
    server_sends: Mapping[int, Iterable[int]],
    fates: Mapping[int, Mapping[tuple[PeerId, int], str]],
    gone_sources: Mapping[int, AbstractSet[tuple[int, int]]] | None = None,
    queued_elsewhere: Mapping[int, AbstractSet[int]] | None = None,
    left_chats: Mapping[int, AbstractSet[int]] | None = None,
) -> list[str]:
    """Divergences between the committed sends and the server: ``accounts`` gives each
    client's account, ``server_sends`` each account's stored random ids (one per message
    stored), ``fates`` each client's ``local_fates``, ``gone_sources`` the forwarded
    messages each account's server no longer has, ``queued_elsewhere`` the random ids
    an account queued where the ledger did not look (a file opened by another process),
    ``left_chats`` the channels each account was removed from: a send into one, or a
    forward out of one, goes with the chat (as Telegram drops a channel it lost)."""
    gone_sources = gone_sources or {}
    queued_elsewhere = queued_elsewhere or {}
    left_chats = left_chats or {}
    problems: list[str] = []
    stored = {account: Counter(ids) for account, ids in server_sends.items()}
    committed: dict[int, set[int]] = {a: set(ids) for a, ids in queued_elsewhere.items()}
    for send in ledger.sends:
        account = accounts[send.client]
        where = f"client {send.client} peer {int(send.peer_id)} local {send.local_id}"
        count = 0
        if send.random_id is not None:
            committed.setdefault(account, set()).add(send.random_id)
            count = stored.get(account, Counter())[send.random_id]
        fate = fates.get(send.client, {}).get((send.peer_id, send.local_id), LocalFate.GONE)
        left = left_chats.get(account, set())
        withdrawn = (
            (send.client, send.peer_id, send.local_id) in ledger.withdrawn
            or send.source in gone_sources.get(account, set())
            or int(send.peer_id) in left
            or (send.source is not None and send.source[0] in left)
        )
        if count > 1:
            problems.append(f"sends: {where} stored {count} times (random id {send.random_id})")
        elif count == 0 and fate != LocalFate.FAILED and not withdrawn:
            problems.append(
                f"sends: {where} committed, neither on the server nor failed ({fate} here)"
            )
    for account, ids in sorted(stored.items()):
        for random_id in sorted(set(ids) - committed.get(account, set())):
            problems.append(
                f"sends: account {account} stored a send no client committed "
                f"(random id {random_id})"
            )
    return problems
