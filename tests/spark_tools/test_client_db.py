"""A seeded client file holds what the same messages and chats added through Postbox's
own transactions would: its rows are written straight into Postbox's tables."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from dataset import AccountSpec, account_tables, build_message, plan_account
from postbox import Postbox
from spark_tools.cli import seed
from spark_tools.client_db import (
    ClientSpec,
    client_layout,
    window_messages,
    window_rows,
    windows,
    write_chats,
)
from spark_tools.client_messages import sorted_client_messages
from spark_tools.progress import Progress

SPEC = AccountSpec(
    seed=9, users=12, groups=4, channels=3, messages=3_000, days=10, log_days=2,
    edit_share=0.05, delete_share=0.05,
)  # fmt: skip
CLIENT = ClientSpec(dialogs=12, active_chats=5, window=120)


def rows_of(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows in key order; the full-text index through its own table."""
    db = apsw.Connection(str(path))
    try:
        names = [
            name
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith(("ft_message_text_", "sqlite_"))
        ]
        return {
            name: db.execute(f'SELECT rowid, * FROM "{name}" ORDER BY rowid').fetchall()
            if name.startswith("ft_")
            else db.execute(f'SELECT * FROM "{name}" ORDER BY key').fetchall()
            for name in names
        }
    finally:
        db.close()


def through_transactions(path: Path) -> None:
    plan = plan_account(SPEC)
    tables = account_tables(plan)
    layout = client_layout(plan, tables, CLIENT)
    rows = sorted(row for window in windows(layout) for row in window_rows(plan, window))
    messages = [build_message(row) for _, row in rows]

    def write(tx):
        tx.add_messages(messages)
        write_chats(tx, plan, layout, tables, layout.offline_at)

    with Postbox(path) as postbox:
        postbox.run(write)


def test_a_seeded_client_file_equals_the_same_data_added_through_transactions(tmp_path):
    seeded = tmp_path / "seeded.db"
    seed(None, SPEC, tmp_path / "dataset", 2, Progress(quiet=True), seeded, CLIENT)
    reference = tmp_path / "reference.db"
    through_transactions(reference)
    got, expected = rows_of(seeded), rows_of(reference)
    assert got.keys() == expected.keys()
    assert len(got["t_message_history"]) > 300 and got["ft_message_text"]
    for name in expected:
        assert got[name] == expected[name], name
    with Postbox(seeded) as postbox:
        assert postbox.run(lambda tx: tx.search_messages("the", limit=5))


@pytest.mark.spark
@pytest.mark.parametrize("partitions", [1, 3])
def test_spark_sorts_the_messages_by_their_binary_history_key(spark, partitions):
    plan = plan_account(SPEC)
    layout = client_layout(plan, account_tables(plan), CLIENT)
    todo = windows(layout)
    expected = sorted(m for window in todo for m in window_messages(plan, window))
    rdd = spark.sparkContext.parallelize(todo, 3).flatMap(lambda w: window_messages(plan, w))
    assert list(sorted_client_messages(spark, rdd, partitions)) == expected
