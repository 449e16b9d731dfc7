"""Wire records: frozen msgspec Structs that encode to msgpack maps and validate on decode.

A record lists its fields with type annotations; msgspec derives from them, once per
type, an encoder and a validating decoder. Bounds are ``msgspec.Meta`` constraints on
``Annotated`` types: ``Int64`` for a plain integer, ``PeerRef``, ``MessageRef`` and
``Counter`` for ids and counters, ``Date`` and ``MessageDate`` for dates, ``Text`` for a
message's text, ``ListOf[X]`` for a list (a tuple in Python) of at most ``MAX_LIST`` items.
Records that share a union are ``TaggedRecord``s, told apart on the wire by their ``_``
tag.

``WireType`` decodes one type (a record or a union of records) from a decoded map or
straight from msgpack bytes. A decode error is an ``InvalidParamsError`` that names the
path of the offending field, e.g. ``params.messages[3].date``.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Self, TypeVar

import msgspec
from msgspec import Meta

from sync.protocol.errors import InvalidParamsError, MalformedFrameError
from sync.protocol.framing import check_part

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_LIST",
    "MAX_MESSAGE_DATE",
    "MAX_TEXT",
    "Counter",
    "Date",
    "Int64",
    "ListOf",
    "MessageDate",
    "MessageRef",
    "PeerRef",
    "TaggedRecord",
    "Text",
    "WireRecord",
    "WireType",
]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
#: The last second a message's date may name: 2106-02-07T06:28:15Z, unsigned 32-bit, the
#: most a client's message key holds.
MAX_MESSAGE_DATE = 2**32 - 1
#: Longest string a field may hold unless it says otherwise (4096 characters, as Telegram).
MAX_TEXT = 4096
#: Most items in a list field unless it says otherwise.
MAX_LIST = 10_000

T = TypeVar("T")
_ENCODER = msgspec.msgpack.Encoder()

#: An integer that fits int64 (msgpack could carry up to 2**64 - 1).
Int64 = Annotated[int, Meta(ge=INT64_MIN, le=INT64_MAX)]
#: A peer id (non-negative int64).
PeerRef = Annotated[int, Meta(ge=0, le=INT64_MAX)]
#: A message id (positive int32).
MessageRef = Annotated[int, Meta(ge=1, le=INT32_MAX)]
#: A pts, seq or read mark (non-negative int32).
Counter = Annotated[int, Meta(ge=0, le=INT32_MAX)]
#: A date in Unix seconds, 64-bit: a signed 32-bit one would end at 2038-01-19T03:14:07Z.
Date = Annotated[int, Meta(ge=0, le=INT64_MAX)]
#: A message's date: unsigned 32-bit, through 2106, as the client keys its history by it.
MessageDate = Annotated[int, Meta(ge=0, le=MAX_MESSAGE_DATE)]
#: A message's text, or any string with no tighter bound.
Text = Annotated[str, Meta(max_length=MAX_TEXT)]
#: A list of at most ``MAX_LIST`` items, a tuple once decoded.
ListOf = Annotated[tuple[T, ...], Meta(max_length=MAX_LIST)]


class WireRecord(msgspec.Struct, frozen=True, gc=False):
    """Base of every record on the wire. Keys it does not know are ignored on decode.

    A record holds scalars, tuples and other records and never changes, so it cannot be
    part of a reference cycle: the garbage collector does not track it (``gc=False``).
    """

    @classmethod
    def from_wire(cls, value: Any, path: str = "") -> Self:
        """Decode and validate a decoded map; ``InvalidParamsError`` names the first bad
        field, under ``path``."""
        try:
            return msgspec.convert(value, cls)
        except msgspec.ValidationError as error:
            raise _invalid_params(error, path, cls.__name__) from None

    def to_wire(self) -> dict[str, Any]:
        """This record as a msgpack-ready map (with its ``_`` tag if it has one; lists are
        tuples)."""
        encoded: dict[str, Any] = msgspec.to_builtins(self)
        return encoded


class TaggedRecord(WireRecord, frozen=True, tag_field="_"):
    """A record that shares a union with others: subclasses name their ``tag``, which
    the wire carries as ``_``."""


class WireType(Generic[T]):
    """One wire type (a record or a union of tagged records) and its decoders, made once."""

    __slots__ = ("_decoder", "kind", "path")

    def __init__(self, kind: Any, path: str) -> None:
        self.kind = kind
        #: Where a value of this type sits in its frame, for error messages.
        self.path = path
        self._decoder: msgspec.msgpack.Decoder[T] = msgspec.msgpack.Decoder(kind)

    def from_wire(self, value: Any, path: str | None = None) -> T:
        """Decode and validate a decoded map; ``InvalidParamsError`` names the bad field."""
        try:
            result: T = msgspec.convert(value, self.kind)
        except msgspec.ValidationError as error:
            raise _invalid_params(error, self.path if path is None else path) from None
        return result

    def decode(self, data: bytes | msgspec.Raw, path: str | None = None) -> T:
        """Decode and validate msgpack bytes; ``MalformedFrameError`` if they are not one
        msgpack value, ``InvalidParamsError`` naming the bad field if it is not valid."""
        try:
            return self._decoder.decode(data)
        except msgspec.ValidationError as error:
            raise _invalid_params(error, self.path if path is None else path) from None
        except (msgspec.DecodeError, RecursionError) as error:
            raise MalformedFrameError(f"not valid msgpack: {error}") from None

    def decode_part(self, data: msgspec.Raw, depth: int) -> T:
        """Decode a part of a frame that sits ``depth`` levels deep in it, with the frame
        checks of ``decode_body``.

        A record's types refuse extension types, keys other than strings and nesting
        beyond its own wherever it has a field, but msgspec skips a key no record knows
        without looking inside. A part that encodes back to the very same bytes has no
        such key and needs nothing more; any other part is checked as ``decode_body``
        checks a frame. So is an invalid part, so that a malformed one is a
        ``MalformedFrameError`` first, as a whole frame's would be.
        """
        try:
            value = self.decode(data)
        except InvalidParamsError:
            check_part(memoryview(data), depth)
            raise
        if _ENCODER.encode(value) != bytes(data):
            check_part(memoryview(data), depth)
        return value


_MISSING_FIELD = "Object missing required field `"
_KEY_IN = "key` in `"
_LONGEST_MESSAGE = 200


def _invalid_params(
    error: msgspec.ValidationError, path: str, name: str = ""
) -> InvalidParamsError:
    """msgspec's "Expected `int`, got `str` - at `$.messages[3].date`" as
    "messages[3].date: expected `int`, got `str`", under ``path``; an error about the
    value itself names ``path``, or ``name`` if there is no path."""
    message, _, where = str(error).partition(" - at `")
    if where.startswith(_KEY_IN):
        location = _join(path, where[len(_KEY_IN) : -1]) or name
        message = "map keys must be strings"
    elif message.startswith(_MISSING_FIELD):
        location = _join(path, where[:-1] + "." + message[len(_MISSING_FIELD) : -1])
        message = "missing"
    else:
        location = (_join(path, where[:-1]) if where else path) or name
        message = message[:1].lower() + message[1:]
        if len(message) > _LONGEST_MESSAGE:  # it may quote a long value
            message = message[: _LONGEST_MESSAGE - 3] + "..."
    return InvalidParamsError(f"{location}: {message}" if location else message)


def _join(path: str, where: str) -> str:
    """``path`` followed by a msgspec location (``$`` being the value at ``path``)."""
    rest = where.removeprefix("$")
    return path + rest if path else rest.removeprefix(".")
