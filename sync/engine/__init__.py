"""The client's sync engine: state manager, difference pipeline, hole filler, outbound.

``SyncEngine`` (or ``SyncWorker`` on a thread of its own) keeps a Postbox converged
with the server. The pipeline follows the seeds: pushes are grouped by counter and
checked (``updates``), turned into mutation operations (``mutable_state``) and
replayed in one transaction with the cursor (``replay``).
"""

from sync.engine.engine import (
    DEVICE_PREFERENCE,
    AccountMismatchError,
    AuthorizationError,
    DatabaseDamagedError,
    EngineStatus,
    SessionTerminatedError,
    SyncEngine,
    SyncWorker,
)
from sync.engine.enqueue import (
    enqueue_delete,
    enqueue_draft,
    enqueue_edit,
    enqueue_forward,
    enqueue_mute,
    enqueue_read,
    enqueue_send,
)
from sync.engine.failed_sends import retry_failed_send, retry_failed_sends
from sync.engine.payloads import MAX_DRAFT_LENGTH, MessageTooLongError, PayloadError, check_text
from sync.engine.timing import Timeouts

__all__ = [
    "MAX_DRAFT_LENGTH",
    "AccountMismatchError",
    "AuthorizationError",
    "DatabaseDamagedError",
    "MessageTooLongError",
    "PayloadError",
    "check_text",
    "DEVICE_PREFERENCE",
    "SessionTerminatedError",
    "EngineStatus",
    "SyncEngine",
    "SyncWorker",
    "Timeouts",
    "enqueue_delete",
    "enqueue_edit",
    "enqueue_forward",
    "enqueue_draft",
    "enqueue_mute",
    "enqueue_read",
    "enqueue_send",
    "retry_failed_send",
    "retry_failed_sends",
]
