"""The windows of a demo with several devices: who logs in where, and which chat opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.demo_seats import demo_seats
from sync.server.config import ServerConfig
from sync.server.server import EmbeddedServer


@pytest.fixture(scope="module")
def server():
    with EmbeddedServer(ServerConfig(token="seats", peers=12, messages=300, seed=9)) as running:
        yield running


def test_one_window_is_the_owner(server) -> None:
    (seat,) = demo_seats(server, Path("c.db"), 1)
    assert seat.token == "seats" and seat.db == Path("c.db") and not seat.open_peer


def test_two_windows_are_two_accounts_opening_their_chat(server) -> None:
    owner, partner = demo_seats(server, Path("/x/c.db"), 2)
    accounts = server.call(lambda s: s.service.accounts)
    me = server.call(lambda s: s.service.store.self_id)
    assert owner.token == "seats"
    assert accounts.authorize(partner.token) == owner.open_peer
    assert partner.open_peer == me
    assert partner.db == Path("/x/c-2.db")
    assert owner.title == "Alex Morgan"


def test_four_windows_add_a_second_device_of_each(server) -> None:
    seats = demo_seats(server, Path("c.db"), 4)
    assert [s.token for s in seats[2:]] == [s.token for s in seats[:2]]
    assert len({s.db for s in seats}) == 4
    assert seats[2].title.endswith("device 2") and seats[0].title.endswith("device 1")


def test_the_same_account_on_every_window(server) -> None:
    seats = demo_seats(server, Path("c.db"), 3, same_account=True)
    assert {s.token for s in seats} == {"seats"}
    assert len({s.open_peer for s in seats}) == 1
    assert [s.device_name for s in seats] == [f"postbox-chat demo, device {n}" for n in (1, 2, 3)]


def test_out_of_range(server) -> None:
    with pytest.raises(ValueError, match="1..4"):
        demo_seats(server, Path("c.db"), 5)
