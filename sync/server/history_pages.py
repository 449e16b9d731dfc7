"""History pages: a chat's messages around an offset, as Telegram's getHistory pages them.

``history_page`` reads one page of a chat (or of one shared-media kind of it) from the
server's database under the offset rules ``GetHistory`` describes: ``offset_id`` (0 for
the newest), ``add_offset`` (negative to reach newer messages), ``limit``, ``min_id`` and
``max_id``.
"""

from __future__ import annotations

from typing import Any

from sync.protocol import GetHistory, Message
from sync.server.database import ServerDatabase
from sync.server.schema import JOINED_COLUMNS, MESSAGE_COLUMNS, message_from_row

__all__ = ["history_page"]

_INT32_MAX = 2**31 - 1


def history_page(db: ServerDatabase, request: GetHistory) -> tuple[tuple[Message, ...], int]:
    """The messages of one page, newest first, and how many the chat (or the filter) holds."""
    base: list[Any]
    if request.filter is None:
        columns, source = MESSAGE_COLUMNS, "messages WHERE peer = ?"
        base = [request.peer]
        count_source = source
    else:
        columns = JOINED_COLUMNS
        source = (
            "media_index i JOIN messages m ON m.peer = i.peer AND m.id = i.id"
            " WHERE i.peer = ? AND i.kind = ?"
        )
        base = [request.peer, request.filter]
        count_source = "media_index WHERE peer = ? AND kind = ?"
    id_column = "id" if request.filter is None else "i.id"
    bounds, bound_args = "", []
    if request.min_id:
        bounds += f" AND {id_column} > ?"
        bound_args.append(request.min_id)
    if request.max_id:
        bounds += f" AND {id_column} < ?"
        bound_args.append(request.max_id)
    (count,) = db.one(f"SELECT count(*) FROM {count_source}", base) or (0,)  # noqa: S608
    select = f"SELECT {columns} FROM {source}{bounds}"  # noqa: S608

    def older(below: int, skip: int, take: int) -> list[tuple[Any, ...]]:
        if take <= 0:
            return []
        return db.execute(
            f"{select} AND {id_column} < ? ORDER BY {id_column} DESC LIMIT ? OFFSET ?",
            (*base, *bound_args, below, take, skip),
        )

    limit = request.limit
    offset_id = request.offset_id or _INT32_MAX
    if request.add_offset >= 0:
        rows = older(offset_id, request.add_offset, limit)
    else:
        reach = -request.add_offset
        newer = db.execute(
            f"{select} AND {id_column} >= ? ORDER BY {id_column} ASC LIMIT ?",
            (*base, *bound_args, offset_id, reach),
        )
        found = len(newer)
        newer.reverse()
        rows = newer[max(found - reach, 0) : max(0, min(found - reach + limit, found))]
        rows += older(offset_id, 0, limit - reach)
    return tuple(message_from_row(row) for row in rows), int(count)
