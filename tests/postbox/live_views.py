"""The property every view keeps: a live view, after any commits, equals one opened fresh."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from postbox import Postbox, Transaction
from postbox.view_keys import AnyViewKey
from postbox.views.subscription import CombinedView

Write = Callable[[Transaction], object]


class Recorder:
    """Collects a subscription's snapshots (delivered on the postbox thread)."""

    def __init__(self) -> None:
        self.snapshots: list[CombinedView] = []

    def __call__(self, snapshot: CombinedView) -> None:
        self.snapshots.append(snapshot)

    @property
    def count(self) -> int:
        return len(self.snapshots)

    @property
    def last(self) -> CombinedView:
        return self.snapshots[-1]


def fresh(postbox: Postbox, key: AnyViewKey) -> object:
    """The snapshot of ``key`` as a view opened now sees it."""
    subscription = postbox.combined_view([key])
    try:
        return subscription.ready.result()[key]
    finally:
        subscription.dispose()


def assert_live_views_equal_fresh(
    postbox: Postbox,
    keys: Sequence[AnyViewKey],
    batches: Sequence[Sequence[Write]],
    after_each: Callable[[Mapping[AnyViewKey, object]], None] | None = None,
) -> None:
    """Open ``keys``, commit each batch of writes in one transaction, and after every
    commit compare each live snapshot with a fresh one (then call ``after_each``)."""
    latest: dict[AnyViewKey, object] = {}

    def keep(snapshot: CombinedView) -> None:
        latest.update(snapshot.views)

    subscription = postbox.combined_view(keys, callback=keep)
    try:
        subscription.ready.result()
        for batch in batches:

            def run(tx: Transaction, batch: Sequence[Write] = batch) -> None:
                for write in batch:
                    write(tx)

            postbox.run(run)
            for key in keys:
                assert latest[key] == fresh(postbox, key), key
            if after_each is not None:
                after_each(latest)
    finally:
        subscription.dispose()
