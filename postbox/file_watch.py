"""Being told that a file was written, without polling it: inotify, on Linux.

``watch_writes(path, on_write)`` calls ``on_write()`` soon after any process writes to
``path`` (on the watcher's thread: it must be quick and thread-safe) and returns a
function that stops the watch; it returns ``None`` where the system cannot tell (not
Linux, no inotify instance or watch left), and the caller then relies on its own idle
checks. A Postbox watches its write-ahead log this way, so another process's commit
reaches its open views at once instead of at the next idle check.

One inotify instance and one daemon thread serve every watch of the process. The watch
is on the file's directory, so a file deleted and created again is still followed.
Writes through a memory map (SQLite's ``-shm`` index) are not reported by the kernel:
a caller checks again shortly after an event that showed it nothing new.
"""

from __future__ import annotations

import ctypes
import logging
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Final

__all__ = ["watch_writes"]

_log = logging.getLogger(__name__)

_IN_MODIFY: Final = 0x00000002
_IN_Q_OVERFLOW: Final = 0x00004000
_IN_CLOEXEC: Final = os.O_CLOEXEC
#: ``struct inotify_event`` without its name: wd, mask, cookie, len.
_EVENT: Final = struct.Struct("iIII")
_READ_SIZE: Final = 64 * 1024
#: How long the watch lets events gather after each batch it reads.
COALESCE_SECONDS: Final = 0.001

Callback = Callable[[], None]


class _Inotify:
    """One inotify instance: watches by directory, callbacks by file name."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._directories: dict[bytes, int] = {}
        #: Watch descriptor -> file name -> token -> callback.
        self._callbacks: dict[int, dict[bytes, dict[object, Callback]]] = {}
        self.alive = True
        thread = threading.Thread(target=self._run, name="postbox-file-watch", daemon=True)
        thread.start()

    def add(self, path: str, on_write: Callback) -> Callable[[], None] | None:
        directory, name = os.path.split(os.path.abspath(os.fsencode(path)))
        token = object()
        with self._lock:
            wd = self._directories.get(directory)
            if wd is None:
                wd = self._libc.inotify_add_watch(self._fd, directory, _IN_MODIFY)
                if wd < 0:
                    error = ctypes.get_errno()
                    _log.info("cannot watch %r: %s", directory, os.strerror(error))
                    return None
                self._directories[directory] = wd
                self._callbacks[wd] = {}
            self._callbacks[wd].setdefault(name, {})[token] = on_write

        def remove() -> None:
            with self._lock:
                names = self._callbacks.get(wd)
                if names is None or token not in names.get(name, {}):
                    return
                del names[name][token]
                if not names[name]:
                    del names[name]
                if not names:
                    del self._callbacks[wd]
                    del self._directories[directory]
                    self._libc.inotify_rm_watch(self._fd, wd)

        return remove

    def _run(self) -> None:
        try:
            while True:
                self._dispatch(os.read(self._fd, _READ_SIZE))
                # A commit writes its log in several calls, each an event: let the rest of
                # them merge in the kernel's queue (identical events do) rather than wake
                # this thread, and take the interpreter lock from the writer, once each.
                time.sleep(COALESCE_SECONDS)
        except OSError as error:
            _log.warning("file watch stopped, idle checks remain: %s", error)
        finally:
            self.alive = False

    def _dispatch(self, data: bytes) -> None:
        """Call, once each, the callbacks of every file the events name."""
        due: dict[object, Callback] = {}
        offset = 0
        with self._lock:
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                start = offset + _EVENT.size
                name = data[start : start + length].rstrip(b"\0")
                offset = start + length
                if mask & _IN_Q_OVERFLOW:  # events were lost: tell everyone
                    for names in self._callbacks.values():
                        for callbacks in names.values():
                            due.update(callbacks)
                    continue
                due.update(self._callbacks.get(wd, {}).get(name, {}))
        for callback in due.values():
            try:
                callback()
            except Exception:
                _log.exception("file watch callback %r failed", callback)


_instance: _Inotify | None = None
_instance_lock = threading.Lock()


def _inotify() -> _Inotify | None:
    global _instance
    if not sys.platform.startswith("linux"):
        return None
    with _instance_lock:
        current = _instance
        if current is not None and current.alive and current.pid == os.getpid():
            return current
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init = libc.inotify_init1
        except (OSError, AttributeError) as error:
            _log.info("no inotify here: %s", error)
            return None
        init.argtypes = [ctypes.c_int]
        init.restype = ctypes.c_int
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_add_watch.restype = ctypes.c_int
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.inotify_rm_watch.restype = ctypes.c_int
        fd = init(_IN_CLOEXEC)
        if fd < 0:
            _log.info("no inotify instance: %s", os.strerror(ctypes.get_errno()))
            return None
        _instance = _Inotify(libc, fd)
        return _instance


def watch_writes(path: str, on_write: Callback) -> Callable[[], None] | None:
    """Call ``on_write()`` whenever ``path`` is written; returns how to stop, or ``None``
    where writes cannot be watched."""
    inotify = _inotify()
    return None if inotify is None else inotify.add(path, on_write)
