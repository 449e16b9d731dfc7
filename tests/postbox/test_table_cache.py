"""The write-behind cache: reads inside a transaction see its writes, ranges included."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from postbox.tables.table import Table
from postbox.value_box import KeyType, ValueBox

keys = st.binary(min_size=1, max_size=2)
values = st.binary(max_size=3)
operations = st.lists(
    st.one_of(st.tuples(st.just("set"), keys, values), st.tuples(st.just("remove"), keys, values)),
    max_size=25,
)


@settings(max_examples=200)
@given(
    committed=st.dictionaries(keys, values, max_size=20),
    ops=operations,
    lower=keys,
    upper=keys,
    limit=st.integers(-1, 6),
    reverse=st.booleans(),
)
def test_cached_reads_match_a_dict(
    tmp_path_factory,
    committed: dict[bytes, bytes],
    ops: list[tuple[str, bytes, bytes]],
    lower: bytes,
    upper: bytes,
    limit: int,
    reverse: bool,
) -> None:
    path: Path = tmp_path_factory.mktemp("cache") / "cache.db"
    box = ValueBox(str(path))
    try:
        table = Table(box, "items")
        with box.write_transaction():
            box.set_many(table.spec, sorted(committed.items()))
        model = dict(committed)
        box.begin()
        for op, key, value in ops:
            if op == "set":
                table._set(key, value)
                model[key] = value
            else:
                table._remove(key)
                model.pop(key, None)
        for key in set(model) | set(committed):
            assert table._get(key) == model.get(key)
        expected = sorted((k, v) for k, v in model.items() if lower <= k < upper)
        if reverse:
            expected.reverse()
        if limit >= 0:
            expected = expected[:limit]
        assert list(table._range(lower, upper, limit=limit, reverse=reverse)) == expected
        assert table._count(lower, upper) == sum(1 for k in model if lower <= k < upper)
        changed = {key for key, _, _ in table.changes()}
        assert changed == {
            k for k in set(model) | set(committed) if model.get(k) != committed.get(k)
        }
        table.before_commit()
        box.commit()
        table.reset()
        stored = dict(box.range(table.spec, b"", b"\xff" * 3))
        assert stored == model
    finally:
        box.close()


def test_integer_keyed_tables_use_the_same_cache(tmp_path: Path) -> None:
    box = ValueBox(str(tmp_path / "ints.db"))
    try:
        table: Table[int] = Table(box, "ints", KeyType.INT64)
        box.begin()
        for key in [-5, 3, -(2**63), 2**62]:
            table._set(key, str(key).encode())
        assert [k for k, _ in table._range(-(2**63), 2**63 - 1)] == [-(2**63), -5, 3, 2**62]
        table.before_commit()
        box.commit()
        table.reset()
        assert table._get(-5) == b"-5"
    finally:
        box.close()
