"""Results of background work (``concurrent.futures.Future``) brought to the main thread.

``FutureRelay.watch(future, callback)`` calls ``callback(result)`` on the thread the
relay lives in (the main thread) once the future is done, through a queued signal. A
failed future is logged, not raised into Qt; ``on_error`` may handle it instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal, Slot

__all__ = ["FutureRelay"]

_log = logging.getLogger(__name__)
T = TypeVar("T")


class FutureRelay(QObject):
    _done = Signal(object, object, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._done.connect(self._finish)
        self.closed = False

    def watch(
        self,
        future: Future[T],
        callback: Callable[[T], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        future.add_done_callback(lambda done: self._emit(done, callback, on_error))

    def _emit(self, future: Future[Any], callback: Any, on_error: Any) -> None:
        if not self.closed:
            self._done.emit(future, callback, on_error)

    @Slot(object, object, object)
    def _finish(self, future: Future[Any], callback: Any, on_error: Any) -> None:
        if self.closed or future.cancelled():
            return
        error = future.exception()
        if error is None:
            callback(future.result())
        elif on_error is not None:
            on_error(error)
        else:
            _log.warning("background work failed: %s", error)

    def close(self) -> None:
        self.closed = True
