"""The status line says, in a sentence, what the sync engine is doing and why."""

from __future__ import annotations

from client.status_line import status_line
from sync.engine import EngineStatus


def status(connection: str, **fields) -> EngineStatus:
    defaults = {"operation": "idle", "queue": (), "fills_in_flight": 0, "outgoing": 0}
    return EngineStatus(connection, counters={}, **{**defaults, **fields})


def test_all_well_shows_nothing() -> None:
    assert status_line(status("connected")).text == ""


def test_catching_up_says_updating() -> None:
    assert status_line(status("connected", operation="pollDifference")).text == "Updating…"


def test_no_server_says_why_and_when_it_retries_with_a_button() -> None:
    line = status_line(
        status(
            "waiting to reconnect (connection refused)",
            problem="cannot reach the server: connection refused",
            retry_in=7.2,
        )
    )
    assert line.text == "Waiting for network: connection refused. Retrying in 8 s."
    assert line.can_retry and line.warning and not line.final


def test_a_refused_token_is_final_and_offers_no_retry() -> None:
    line = status_line(
        status("token refused", problem="the server refused the token: the token is not valid")
    )
    assert line.final and not line.can_retry
    assert line.text.startswith("The server refused this token.")


def test_a_long_problem_is_clipped_to_one_line() -> None:
    line = status_line(status("connected", problem="database is locked " * 20))
    assert len(line.text) <= 92 and not line.text.endswith("….")
    assert line.text.startswith("Database is locked")


def test_a_lost_connection_says_so() -> None:
    assert status_line(status("reconnecting (closed by the server)")).text == (
        "Connection lost. Reconnecting…"
    )
    waiting = status_line(status("reconnecting (closed by the server)", retry_in=3.0))
    assert waiting.text == "Connection lost. Retrying in 3 s." and waiting.can_retry


def test_without_a_sync_engine_it_says_offline() -> None:
    assert status_line(None).text == "Offline"


def test_a_standby_says_another_process_syncs_without_a_warning() -> None:
    line = status_line(status("standby", role="standby", master_client_id=0xABC))
    assert line.text == "Standby: another process syncs this account; its updates show here."
    assert not line.warning and not line.can_retry and not line.final


def test_a_standby_that_cannot_take_part_warns() -> None:
    problem = "cannot take part in choosing the syncing process: cannot open x.master"
    line = status_line(status("standby", role="standby", problem=problem))
    assert line.warning
    assert line.text.startswith("Cannot take part in choosing the syncing process")


def test_a_refused_token_is_said_even_after_the_engine_let_the_master_lock_go() -> None:
    line = status_line(status("token refused", role="standby", problem="refused"))
    assert line.final and line.text.startswith("The server refused this token.")


def test_another_accounts_database_is_final_and_offers_to_log_out() -> None:
    problem = "the database belongs to account 1, and the token logs in as account 2"
    line = status_line(status("another account's database", role="standby", problem=problem))
    assert line.final and line.warning and line.can_log_out and not line.can_retry
    assert line.text.startswith("This database belongs to another account")


def test_a_damaged_database_is_final_and_says_how_to_recover() -> None:
    problem = "/tmp/c.db is damaged (stored message cannot be decoded): restore it from a copy"
    line = status_line(status("database damaged", role="standby", problem=problem))
    assert line.final and line.warning and line.can_log_out and not line.can_retry
    assert line.text.startswith("This database is damaged")
    assert "restore it from a copy" in line.text


def test_a_flood_wait_says_what_waits_and_how_long() -> None:
    line = status_line(status("connected", flood_waits=(("history", 2.5), ("send", 6.2))))
    assert line.text == "The server asked to slow down: sending waits 7 s."
    assert not line.warning and not line.can_retry
