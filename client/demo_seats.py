"""Who sits at each window of a demo with several devices.

The first window is the dataset's owner (the server's primary account); the second, the
person it writes with most, logged in with the token the server derives for them, with
each window opening their chat with the other; a third and a fourth are second devices
of the two. With ``same_account`` every window is a device of the owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sync.server import EmbeddedServer, MockServer

__all__ = ["MAX_DEVICES", "Seat", "demo_seats"]

MAX_DEVICES = 4


@dataclass(frozen=True, slots=True)
class Seat:
    """One window: the account's token, its own database, and the chat it opens."""

    token: str
    db: Path
    title: str
    device_name: str
    open_peer: int = 0
    open_title: str = ""


@dataclass(frozen=True, slots=True)
class _Person:
    user_id: int
    name: str
    token: str


def _people(server: MockServer) -> tuple[_Person, _Person | None]:
    """The owner, and the person it has the busiest private chat with (if any)."""
    accounts = server.service.accounts
    users = accounts.users()
    me_id, me_name = users[0]
    names = dict(users[1:])
    sizes = [(count, peer) for peer, count in server.service.store.chat_sizes() if peer in names]
    me = _Person(me_id, me_name, accounts.token_for(me_id))
    if not sizes:
        return me, None
    _, partner = max(sizes)
    return me, _Person(partner, names[partner], accounts.token_for(partner))


def _database(first: Path, number: int) -> Path:
    return first if number == 0 else first.with_name(f"{first.stem}-{number + 1}{first.suffix}")


def demo_seats(
    server: EmbeddedServer, db: Path, devices: int, *, same_account: bool = False
) -> list[Seat]:
    """The windows of a demo with ``devices`` windows; ``db`` is the first's database,
    the others' sit next to it."""
    if not 1 <= devices <= MAX_DEVICES:
        raise ValueError(f"devices must be within 1..{MAX_DEVICES}, not {devices}")
    me, partner = server.call(_people)
    if devices == 1:
        return [Seat(me.token, db, me.name, "postbox-chat demo")]
    if same_account or partner is None:
        people = [me] * devices
    else:
        people = [me, partner, me, partner][:devices]
    seats = []
    for number, person in enumerate(people):
        device = people[:number].count(person) + 1
        title = f"{person.name}, device {device}" if people.count(person) > 1 else person.name
        other = partner if person is me else me  # each opens the chat of the two
        seats.append(
            Seat(
                person.token,
                _database(db, number),
                title,
                f"postbox-chat demo, device {device}",
                other.user_id if other is not None else 0,
                other.name if other is not None else "",
            )
        )
    return seats
