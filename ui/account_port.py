"""What the window needs from an account (``client.account.Account`` provides it).

Every method returns at once with a future: the work runs on the postbox thread or
the sync worker, never on the main thread, and its result comes back through
``ui.futures.FutureRelay``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from typing import Protocol

from client import Device, EngineStatus, HoleSegment, SearchResults
from postbox import ClosedRange, Media, Message, MessageId, PeerId, Postbox, ScrollPosition

__all__ = ["AccountLike"]


class AccountLike(Protocol):
    postbox: Postbox

    def send_message(
        self, peer_id: PeerId, text: str, *, reply_to: int | None = None
    ) -> Future[MessageId]: ...

    def send_media(self, peer_id: PeerId, media: Media, *, text: str = "") -> Future[MessageId]: ...

    def mark_read(self, peer_id: PeerId, max_id: int) -> Future[bool]: ...

    def edit_message(self, message_id: MessageId, text: str) -> Future[bool]: ...

    def delete_messages(
        self, peer_id: PeerId, message_ids: Sequence[MessageId], *, for_everyone: bool = True
    ) -> Future[int]: ...

    def retry_messages(self, message_ids: Sequence[MessageId]) -> Future[int]: ...

    def forward_messages(
        self, peer_id: PeerId, message_ids: Sequence[MessageId]
    ) -> Future[list[MessageId]]: ...

    def messages(self, peer_id: PeerId, ids: Iterable[int]) -> Future[dict[int, Message]]: ...

    def set_muted(self, peer_id: PeerId, muted: bool) -> Future[None]: ...

    def save_draft(
        self, peer_id: PeerId, text: str, *, reply_to: int | None = None, thread_id: int = 0
    ) -> Future[None]: ...

    def keep_view_state(
        self,
        peer_id: PeerId,
        scroll: ScrollPosition | None,
        selected_ids: Sequence[int] = (),
        *,
        thread_id: int = 0,
    ) -> Future[None]: ...

    def refresh_profile(self, peer_id: PeerId) -> Future[None]: ...

    def search(self, query: str, *, limit: int = 50) -> Future[SearchResults]: ...

    def hole_map(
        self, peer_id: PeerId, fetching: Sequence[ClosedRange] = ()
    ) -> Future[list[HoleSegment]]: ...

    def status_later(self) -> Future[EngineStatus | None]: ...

    def devices(self) -> Future[list[Device]]: ...

    def terminate_device(self, device: int) -> Future[list[Device]]: ...

    def log_out(self) -> None: ...
    def reconnect_now(self) -> None: ...
