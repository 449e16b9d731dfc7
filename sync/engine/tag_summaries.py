"""Shared-media counts (tag summaries) the server must confirm.

A summary is the server's count of a chat's messages of one media kind, up to an id;
newer messages add to it as they arrive (``postbox``). A deletion of messages this
client never stored may have lowered it by an unknown amount, and a too-long gap may
have hidden any number of deletions. Then the chat's summaries are queued for
validation (an operation-log entry, so the queue survives a restart), and
``TagSummaryValidator`` (``validators``) fetches them again. Opening a profile queues
the same validation, so one path writes the server's counts.
"""

from __future__ import annotations

from collections.abc import Iterable

from postbox import MessageId, PeerId, Transaction
from sync.engine.channel_access import inaccessible_channels
from sync.engine.convert import CLOUD
from sync.engine.log_tags import VALIDATE_TAG_SUMMARIES_TAG

__all__ = [
    "request_summary_validation",
    "validate_all_summaries",
    "validate_summaries_after_deletion",
]


def request_summary_validation(tx: Transaction, peer_id: PeerId) -> None:
    """Queue ``peer_id``'s shared-media counts to be fetched from the server (once)."""
    if not tx.get_operation_log_entries(peer_id, VALIDATE_TAG_SUMMARIES_TAG):
        tx.add_operation_log_entry(peer_id, VALIDATE_TAG_SUMMARIES_TAG, {})


def validate_summaries_after_deletion(tx: Transaction, peer_id: PeerId, ids: Iterable[int]) -> None:
    """Before deleting ``ids``: queue validation if the chat has summaries and one of the
    ids is not stored but within what a summary counts."""
    missing = [id_ for id_ in ids if not tx.message_exists(MessageId(peer_id, CLOUD, id_))]
    if not missing:  # the usual case, and cheaper to tell than the summaries
        return
    summaries = tx.get_tag_summaries(peer_id)
    if summaries and min(missing) <= max(summary.max_id for summary in summaries.values()):
        request_summary_validation(tx, peer_id)


def validate_all_summaries(tx: Transaction, peer_id: PeerId | None = None) -> None:
    """After a jump over unseen updates: queue every chat that has summaries (or
    ``peer_id`` only, if it has any); not a channel refused for good."""
    gone = {PeerId(channel) for channel in inaccessible_channels(tx)}
    for peer in {key.peer_id for key in tx.get_tag_summaries(peer_id)} - gone:
        request_summary_validation(tx, peer)
