"""The checks at the end of a schedule, once the world has settled.

For each client, in seat order: ``sync.verify.verify`` compares its Postbox with the
server; each failed message must have failed for a refusal no retry cures; the file
must belong to one account (bound to its seat's, and no send it queued stored as
another account's); no channel may be stored behind a pts it was told of
(``told.py``). Then every committed send is held against the server (``sends.py``).
``EndChecks`` appends what it finds to the world's list of divergences.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from postbox import ChangeRecord, MessageFailure, MessageId, Postbox, Transaction
from sync.engine.enqueue import ACCOUNT_PEER_PREFERENCE
from sync.engine.failed_sends import PERMANENT_ERRORS
from sync.engine.log_tags import SEND_TAG
from sync.protocol import ProtocolError, Request, WireRecord, method_name
from sync.server.config import FaultConfig
from sync.server.faults import FaultInjector
from sync.server.service import Session
from sync.simulation.sends import SendLedger, check_sends, local_fates
from sync.simulation.world import SimClient, SimServer
from sync.verify import verify

__all__ = ["EndChecks", "queued_sends"]


class EndChecks:
    """The end-of-schedule checks over what the world recorded while it ran: the
    ``ledger`` of committed sends, the random ids each file queued (``queued``, by client
    name), the accounts that opened a file not their own (``intruders``) and the channels
    the account was removed from (``left_channels``). Each divergence goes into
    ``divergences`` as one line; ``failed_messages`` counts the failed messages seen."""

    def __init__(
        self,
        divergences: list[str],
        note: Callable[[str], None],
        *,
        ledger: SendLedger,
        queued: dict[str, set[int]],
        intruders: AbstractSet[int],
        left_channels: AbstractSet[int],
    ) -> None:
        self.divergences = divergences
        self.note = note
        self.ledger = ledger
        self.queued = queued
        self.intruders = intruders
        self.left_channels = left_channels
        self.failed_messages = 0

    async def run(self, server: SimServer, clients: Sequence[SimClient]) -> None:
        for client in clients:
            await self.verify_client(client, server, clients)
        self.check_sends(server, clients)

    async def verify_client(
        self, client: SimClient, server: SimServer, clients: Sequence[SimClient]
    ) -> None:
        """One client's file against the server, then the checks beyond ``verify``."""
        postbox = client.postbox
        assert postbox is not None
        account = server.service.accounts.authorize(client.token)
        assert account is not None
        session = Session(
            -1,
            FaultInjector.for_connection(FaultConfig(), 0, 0),
            authorized=True,
            account=account,
        )

        async def call(params: WireRecord) -> Any:
            return server.service.handle(session, Request(0, method_name(params), params))

        try:
            report = await verify(postbox, call)
        except ProtocolError as error:
            self.divergences.append(f"{client.name}verify: the server refused: {error}")
            return
        self.divergences.extend(client.name + str(divergence) for divergence in report.divergences)
        self.check_failures(client, postbox)
        self.check_belongs(client, postbox, server, account, clients)
        behind = functools.partial(client.told.behind, left=frozenset(self.left_channels))
        self.divergences.extend(client.name + line for line in postbox.run(behind))
        cursor = postbox.run(_cursor)
        truth = server.service.box(session).digest() if server.store is not None else ""
        self.note(f"{client.name}verified {report.summary()} cursor {cursor} server {truth}")

    def check_failures(self, client: SimClient, postbox: Postbox) -> None:
        """Each failed message failed for a refusal no retry cures, recorded with it (a
        passing one must have been retried until it went through)."""
        failures = postbox.run(_failures)
        self.failed_messages += len(failures)
        for message_id, failure in failures:
            if failure is None or failure.code not in PERMANENT_ERRORS:
                self.divergences.append(
                    f"{client.name}failed message {message_id.id} of peer "
                    f"{int(message_id.peer_id)} failed for {failure}"
                )
        if failures:
            self.note(f"{client.name}failed messages {[i.id for i, _ in failures]}")

    def check_belongs(
        self,
        client: SimClient,
        postbox: Postbox,
        server: SimServer,
        account: int,
        clients: Sequence[SimClient],
    ) -> None:
        """The file belongs to one account: it is bound to its seat's, and no send it
        queued reached the server as another account."""
        bound = postbox.run(lambda tx: tx.get_preference(ACCOUNT_PEER_PREFERENCE))
        if bound != account:
            self.divergences.append(
                f"{client.name}file: belongs to account {bound}, not to its seat's {account}"
            )
        accounts = server.service.accounts
        involved = {accounts.authorize(other.token) for other in clients} | self.intruders
        others = sorted(other for other in involved if other is not None and other != account)
        for random_id in sorted(self.queued.get(client.name, ())):
            for other in others:
                if accounts.box(other).sent_before(random_id) is not None:
                    self.divergences.append(
                        f"{client.name}file: a send it queued reached the server as"
                        f" account {other}, not {account}"
                    )

    def check_sends(self, server: SimServer, clients: Sequence[SimClient]) -> None:
        """Every committed send reached the server exactly once or is failed here
        (``sends.check_sends``)."""
        assert server.store is not None
        accounts = server.service.accounts
        account_of: dict[int, int] = {}
        for number, client in enumerate(clients):
            account = accounts.authorize(client.token)
            assert account is not None
            account_of[number] = account
        boxes = {account: accounts.box(account) for account in set(account_of.values())}
        stored = {
            account: [random_id for random_id, _, _ in box.sent_messages()]
            for account, box in boxes.items()
        }
        gone: dict[int, set[tuple[int, int]]] = {account: set() for account in boxes}
        for send in self.ledger.sends:
            account = account_of[send.client]
            if send.source is not None and boxes[account].message(*send.source) is None:
                gone[account].add(send.source)
        # Sends queued in a file while another process had it open (wrong-account).
        elsewhere: dict[int, set[int]] = {}
        for number, client in enumerate(clients):
            queued = self.queued.get(client.name, set())
            elsewhere.setdefault(account_of[number], set()).update(queued)
        fates = {}
        for number, client in enumerate(clients):
            postbox = client.postbox
            assert postbox is not None
            mine = [send for send in self.ledger.sends if send.client == number]
            fates[number] = postbox.run(lambda tx, mine=mine: local_fates(tx, mine))  # type: ignore[misc]
        self.divergences.extend(
            check_sends(
                self.ledger,
                account_of,
                stored,
                fates,
                gone,
                elsewhere,
                {accounts.primary_id: self.left_channels},
            )  # fmt: skip
        )


def queued_sends(record: ChangeRecord) -> list[int]:
    """The random ids of the sends a commit queued (for the check that a file's sends
    reached the server as its own account)."""
    return [
        operation.entry.contents["random_id"]
        for (_peer, tag), operations in record.operation_log_operations.items()
        if tag == SEND_TAG
        for operation in operations
        if operation.action != "remove"
        and isinstance(operation.entry.contents, dict)
        and type(operation.entry.contents.get("random_id")) is int
        # A malformed entry's random id may be out of range: no server stores it.
        and -(2**63) <= operation.entry.contents["random_id"] < 2**63
    ]


def _failures(tx: Transaction) -> list[tuple[MessageId, MessageFailure | None]]:
    return [(i, tx.get_message_failure(i)) for i in tx.get_failed_message_ids()]


def _cursor(tx: Transaction) -> str:
    state = tx.get_state()
    return "none" if state is None else f"{state.pts}/{state.qts}/{state.seq}"
