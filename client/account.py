"""An account: one Postbox file, and the sync worker that keeps it converged with a server.

The app's screens read the Postbox through live views; what the user does goes through
the methods here, which write locally first (so the screen changes at once) and leave
the delivery to the sync worker's outbound queue.

Several processes may open one database file (a second window, ``postbox-chat send``):
only the master client syncs it (``sync.engine.master``); an account whose process is a
standby shows what the master commits, and takes over when the master exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Self

from client.devices import Device
from client.hole_map import HoleSegment, read_hole_map
from client.search_query import SearchResults, search_database
from postbox import (
    ChatInterfaceState,
    ClosedRange,
    MasterClientLock,
    Media,
    MediaKind,
    Message,
    MessageId,
    MessageNamespace,
    PeerId,
    PeerNotificationSettings,
    Postbox,
    ScrollPosition,
    SynchronizeableDraft,
    Transaction,
)
from sync.engine import (
    MAX_DRAFT_LENGTH,
    EngineStatus,
    SyncEngine,
    SyncWorker,
    Timeouts,
    check_text,
    enqueue_delete,
    enqueue_draft,
    enqueue_edit,
    enqueue_forward,
    enqueue_mute,
    enqueue_read,
    enqueue_send,
    retry_failed_send,
)
from sync.protocol import Authorizations, GetAuthorizations, ResetAuthorization, WireRecord
from sync.state import ServerClock

__all__ = ["Account"]

CLOUD_NAMESPACE = int(MessageNamespace.CLOUD)


class Account:
    """``Account(db, host, port, token).start()``; ``close()`` stops syncing and closes."""

    def __init__(
        self,
        db: str | Path | None,
        host: str,
        port: int,
        token: str,
        *,
        timeouts: Timeouts = Timeouts(),  # noqa: B008 - frozen
        device_name: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.postbox = Postbox(db)
        #: The device's wall clock; outgoing dates follow the server's (``_date``).
        self._clock = clock
        self.host, self.port = host, port
        name = device_name or f"postbox-chat on {platform.node() or 'this computer'}"
        self._worker = SyncWorker(
            lambda: SyncEngine(
                self.postbox, host, port, token, timeouts=timeouts, device_name=name,
                master_lock=None if db is None else MasterClientLock(db), wall_clock=clock,
            )
        )  # fmt: skip
        self._started = False
        self._closed = False
        #: The account logged out: its database is gone.
        self.logged_out = False

    def start(self) -> Self:
        self._worker.start()
        self._started = True
        return self

    @property
    def worker(self) -> SyncWorker:
        return self._worker

    @property
    def role(self) -> str | None:
        """ "master" while this process syncs the database, "standby" while another one
        does; ``None`` before the sync worker runs."""
        engine = self._worker.engine
        if not self._started or engine is None:
            return None
        return "master" if engine.election is None else engine.election.role.value

    @property
    def client_id(self) -> int | None:
        """This process's client id for the database (``None`` before it runs, or for a
        database in memory, which no other process can open)."""
        engine = self._worker.engine
        if not self._started or engine is None or engine.election is None:
            return None
        return engine.election.client_id

    def status(self) -> EngineStatus | None:
        """The sync engine's state, or ``None`` before it runs."""
        if not self._started or self._worker.engine is None:
            return None
        status: EngineStatus = self._worker.call(lambda engine: engine.status())
        return status

    def _date(self) -> int:
        """The date of something this device does now: the server's time as the engine
        estimates it from the server's dates, so a device clock set off does not misplace
        a pending message; the device's clock, within the dates a message may carry,
        before the engine has heard from the server."""
        engine = self._worker.engine
        if engine is not None:
            return engine.server_time()
        return ServerClock().now(wall=self._clock(), monotonic=0.0)

    def send_message(
        self, peer_id: PeerId, text: str, *, reply_to: int | None = None
    ) -> Future[MessageId]:
        """Store a pending message and queue it; the future gives its local id. Does not
        wait for the database, so the UI thread can call it. A text over
        ``MAX_MESSAGE_LENGTH`` characters raises ``MessageTooLongError`` at once."""
        if not text.strip():
            raise ValueError("a message needs some text")
        check_text(text)
        return self.postbox.transaction(
            lambda tx: enqueue_send(tx, peer_id, text, timestamp=self._date(), reply_to=reply_to)
        )

    def send_media(self, peer_id: PeerId, media: Media, *, text: str = "") -> Future[MessageId]:
        """Store a pending sticker or GIF message (from the stored collections) and queue
        it; a sticker goes alone, with no text. The future gives its local id."""
        if media.kind not in (MediaKind.STICKER, MediaKind.GIF) or media.glyph is None:
            raise ValueError("only a sticker or GIF from the picker can be sent")
        if media.kind is MediaKind.STICKER and text.strip():
            raise ValueError("a sticker is sent without text")
        check_text(text, "a caption")
        return self.postbox.transaction(
            lambda tx: enqueue_send(tx, peer_id, text, timestamp=self._date(), media=(media,))
        )

    def refresh_stickers(self) -> None:
        """Ask the server for the sticker sets and saved GIFs again (with the hashes of
        the stored ones, so nothing unchanged comes back)."""
        if self._started and self._worker.running:
            with contextlib.suppress(RuntimeError):  # stopped meanwhile
                self._worker.submit(lambda engine: engine.item_collections.request("asked"))

    def forward_messages(
        self, peer_id: PeerId, message_ids: Sequence[MessageId]
    ) -> Future[list[MessageId]]:
        """Store pending copies of messages in ``peer_id``, each saying where it first
        appeared, and queue forwarding them; the future gives their local ids."""
        sources = list(message_ids)
        return self.postbox.transaction(
            lambda tx: enqueue_forward(tx, peer_id, sources, timestamp=self._date())
        )

    def mark_read(self, peer_id: PeerId, max_id: int) -> Future[bool]:
        """Read a chat up to ``max_id`` here, and tell the server (without waiting)."""
        return self.postbox.transaction(lambda tx: enqueue_read(tx, peer_id, max_id))

    def edit_message(self, message_id: MessageId, text: str) -> Future[bool]:
        """Change one of our sent messages; the future gives ``False`` if it is not ours
        or not sent yet. A text over ``MAX_MESSAGE_LENGTH`` characters raises
        ``MessageTooLongError`` at once."""
        if not text.strip():
            raise ValueError("a message needs some text")
        check_text(text, "an edited message")
        return self.postbox.transaction(lambda tx: enqueue_edit(tx, message_id, text))

    def delete_messages(
        self, peer_id: PeerId, message_ids: Sequence[MessageId], *, for_everyone: bool = True
    ) -> Future[int]:
        """Delete messages here at once and on the server through the outbound queue;
        the future gives how many went."""
        ids = list(message_ids)
        return self.postbox.transaction(
            lambda tx: enqueue_delete(tx, peer_id, ids, revoke=for_everyone)
        )

    def retry_messages(self, message_ids: Sequence[MessageId]) -> Future[int]:
        """Send failed messages again, oldest first, each with the request it failed with
        (a send that did arrive after all is not doubled); the future gives how many
        were queued (a message no longer failed is skipped)."""
        ids = sorted(message_ids)
        return self.postbox.transaction(
            lambda tx: sum(retry_failed_send(tx, message_id) for message_id in ids)
        )

    def status_later(self) -> Future[EngineStatus | None]:
        """The sync engine's state, without waiting for it (``None`` before it runs; the
        last state once it stopped for good, as after a refused token)."""
        engine = self._worker.engine
        if self._started and engine is not None and self._worker.running:
            try:
                return self._worker.submit(lambda engine: engine.status())
            except RuntimeError:  # it stopped just now
                pass
        done: Future[EngineStatus | None] = Future()
        done.set_result(None if engine is None else engine.status())
        return done

    def reconnect_now(self) -> None:
        """Try to connect now instead of at the end of the current wait."""
        if self._started and self._worker.running:
            with contextlib.suppress(RuntimeError):  # stopped meanwhile: nothing to retry
                self._worker.submit(lambda engine: engine.reconnect_now())

    def hole_map(
        self, peer_id: PeerId, fetching: Sequence[ClosedRange] = ()
    ) -> Future[list[HoleSegment]]:
        """Which id ranges of a chat are stored, holes, or (``fetching``) being fetched."""
        return self.postbox.transaction(lambda tx: read_hole_map(tx, peer_id, fetching))

    def refresh_profile(self, peer_id: PeerId) -> Future[None]:
        """Fetch a peer's profile (about, presence, shared-media counts) into the database;
        the profile screen's views show it when it lands."""
        if not self._started:
            offline: Future[None] = Future()
            offline.set_exception(RuntimeError("the account is not syncing"))
            return offline
        return self._worker.submit(lambda engine: engine.refresh_profile(peer_id))

    def set_muted(self, peer_id: PeerId, muted: bool) -> Future[None]:
        """Mute a chat for ever, or unmute it, here at once and on the account's other
        devices once the server has it."""
        until = PeerNotificationSettings.MUTED_FOREVER if muted else 0
        return self.postbox.transaction(lambda tx: enqueue_mute(tx, peer_id, until))

    def save_draft(
        self, peer_id: PeerId, text: str, *, reply_to: int | None = None, thread_id: int = 0
    ) -> Future[None]:
        """Keep what is typed in a chat (an empty text with no reply clears it): here at
        once, on the account's other devices once the server has it. A text over
        ``MAX_DRAFT_LENGTH`` characters raises ``MessageTooLongError`` at once."""
        check_text(text, "a draft", MAX_DRAFT_LENGTH)
        draft = SynchronizeableDraft(text, reply_to, self._date())
        return self.postbox.transaction(lambda tx: enqueue_draft(tx, peer_id, draft, thread_id))

    def keep_view_state(
        self,
        peer_id: PeerId,
        scroll: ScrollPosition | None,
        selected_ids: Sequence[int] = (),
        *,
        thread_id: int = 0,
    ) -> Future[None]:
        """Remember where a chat was scrolled to and what was selected (this device only)."""
        selected = tuple(selected_ids)

        def keep(tx: Transaction) -> None:
            state = tx.get_chat_interface_state(peer_id, thread_id) or ChatInterfaceState()
            kept = dataclasses.replace(state, scroll=scroll, selected_ids=selected)
            tx.set_chat_interface_state(peer_id, kept, thread_id)

        return self.postbox.transaction(keep)

    def search(self, query: str, *, limit: int = 50) -> Future[SearchResults]:
        """Chats by name and messages by text (the full-text index) matching ``query``."""
        return self.postbox.transaction(lambda tx: search_database(tx, query, limit))

    def messages(self, peer_id: PeerId, ids: Iterable[int]) -> Future[dict[int, Message]]:
        """The stored cloud messages of a chat among ``ids`` (what replies answer)."""
        wanted = list(ids)

        def read(tx: Transaction) -> dict[int, Message]:
            found = {}
            for id_ in wanted:
                message = tx.get_message(MessageId(peer_id, CLOUD_NAMESPACE, id_))
                if message is not None:
                    found[id_] = message
            return found

        return self.postbox.transaction(read)

    def close(self) -> None:
        if self._started:
            self._worker.stop()
            self._started = False
        if not self._closed:
            self._closed = True
            self.postbox.close()

    def log_out(self) -> None:
        """Stop syncing, close the database and delete its files: what a device whose
        session was terminated is left to do."""
        self.close()
        path = self.postbox.path
        if path is not None and str(path) != ":memory:":
            for suffix in ("", "-wal", "-shm", "-journal", ".master"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        self.logged_out = True

    def devices(self) -> Future[list[Device]]:
        """The account's devices (sessions), this one first."""
        return self._ask_devices(GetAuthorizations())

    def terminate_device(self, device: int) -> Future[list[Device]]:
        """Terminate another device's session; the future gives the devices left."""
        return self._ask_devices(ResetAuthorization(device))

    def _ask_devices(self, params: WireRecord) -> Future[list[Device]]:
        if not self._started or not self._worker.running:
            offline: Future[list[Device]] = Future()
            offline.set_exception(RuntimeError("the account is not syncing"))
            return offline

        async def ask(engine: SyncEngine) -> list[Device]:
            answer: Authorizations = await engine.call(params)
            return [
                Device(s.device, s.name, s.current, s.online, s.last_active)
                for s in answer.sessions
            ]

        return self._worker.submit(ask)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
