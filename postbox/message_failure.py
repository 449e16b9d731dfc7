"""Why an outgoing message failed, as the failed-messages table keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from postbox.coding import pack, unpack
from postbox.errors import CorruptValueError

__all__ = ["MessageFailure"]


@dataclass(frozen=True, slots=True)
class MessageFailure:
    """A send the server refused for good: its error ``code`` and ``text`` as the
    server gave them ("" for both when the reason is not known, as for a message
    stored failed by other means). ``request`` is what was queued to send it (any
    msgpack-encodable value, opaque here), so a retry sends the very same request;
    ``None`` when it is not known. Its arrays read back as tuples, as the operation
    log's contents do."""

    code: str = ""
    text: str = ""
    request: Any = None

    @property
    def known(self) -> bool:
        """Whether the server's reason is known."""
        return bool(self.code)

    def encode(self) -> bytes:
        return pack((1, self.code, self.text, self.request))

    @classmethod
    def decode(cls, data: bytes) -> MessageFailure:
        fields = unpack(data, "message failure")
        if not isinstance(fields, tuple) or len(fields) != 4 or fields[0] != 1:
            raise CorruptValueError("stored message failure has an unknown layout")
        _, code, text, request = fields
        if type(code) is not str or type(text) is not str:
            raise CorruptValueError(f"stored message failure holds {code!r}, {text!r}")
        return cls(code, text, request)
