"""The message row function: rows per second of ``generate_slice`` over a whole account,
the cost a 100-million-message seed pays per row before encoding and writing.

Sizes: 1,000,000 messages (``--quick``: 200,000) over 5,000 private chats, 1,500 groups
and 1,000 channels in 30 days, generated in one process, slice after slice; the plan is
built first and not counted.
"""

from __future__ import annotations

from benchmarks.harness import BenchContext, Figure, benchmark, timed
from dataset import AccountSpec, generate_slice, plan_account, plan_slices


def _spec(messages: int) -> AccountSpec:
    return AccountSpec(1, 5_000, 1_500, 1_000, messages, 30, log_days=1, delete_share=0.01)


@benchmark("rows")
def run(ctx: BenchContext) -> list[Figure]:
    size = 200_000 if ctx.quick else 1_000_000
    plan = plan_account(_spec(size))
    slices = plan_slices(plan, 100_000)
    rows = 0
    with timed() as elapsed:
        for pieces in slices:
            rows += len(generate_slice(plan, pieces)[0])
    return [
        Figure(f"{size:,} messages", size / elapsed.seconds, "rows/s"),
        Figure("per row", elapsed.seconds / size * 1e6, "µs", f"{rows:,} rows kept"),
    ]
