"""Wire records: frozen dataclasses that encode to msgpack maps and validate on decode.

A record class lists its fields with type annotations; ``WireRecord`` derives from them,
once per class, an encoder and a validating decoder. Supported field types: ``int``
(never ``bool``), ``bool``, ``str``, ``bytes``, ``float``, enums, other records, unions
of records (told apart by their ``_`` tag), ``X | None``, ``list[X]`` and
``tuple[X, ...]``. Integers are int64 unless ``Annotated[int, Limit(low=..., high=...)]``
narrows them; strings and lists have default length limits that ``Limit(max_len=...)``
changes.

A decode error names the path of the offending field, e.g. ``messages[3].date``.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Self, TypeVar

from sync.protocol.errors import InvalidParamsError

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "MAX_LIST",
    "MAX_TEXT",
    "WireRecord",
    "Counter",
    "Limit",
    "MessageRef",
    "PeerRef",
    "decode_union",
]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
#: Longest string a field may hold unless it says otherwise (4096 characters, as Telegram).
MAX_TEXT = 4096
#: Most items in a list field unless it says otherwise.
MAX_LIST = 10_000

_Decoder = Callable[[Any, str], Any]
_Encoder = Callable[[Any], Any]
R = TypeVar("R", bound="WireRecord")


@dataclasses.dataclass(frozen=True, slots=True)
class Limit:
    """Bounds for a field, given as ``Annotated[int, Limit(low=0)]``; checked on decode."""

    low: int | None = None
    high: int | None = None
    max_len: int | None = None


#: A peer id (non-negative int64).
PeerRef = Annotated[int, Limit(low=0)]
#: A message id (positive int32).
MessageRef = Annotated[int, Limit(low=1, high=INT32_MAX)]
#: A pts, seq, date or read mark (non-negative int32).
Counter = Annotated[int, Limit(low=0, high=INT32_MAX)]


def _fail(path: str, expected: str, value: Any) -> InvalidParamsError:
    return InvalidParamsError(f"{path}: expected {expected}, got {_describe(value)}")


def _describe(value: Any) -> str:
    if value is None:
        return "nothing"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _int_decoder(low: int | None, high: int | None) -> _Decoder:
    lowest = INT64_MIN if low is None else low
    highest = INT64_MAX if high is None else high

    def decode(value: Any, path: str) -> int:
        if type(value) is not int:
            raise _fail(path, "an integer", value)
        if not lowest <= value <= highest:
            raise InvalidParamsError(f"{path}: {value} is outside {lowest}..{highest}")
        return value

    return decode


def _str_decoder(max_len: int | None) -> _Decoder:
    longest = MAX_TEXT if max_len is None else max_len

    def decode(value: Any, path: str) -> str:
        if type(value) is not str:
            raise _fail(path, "a string", value)
        if len(value) > longest:
            raise InvalidParamsError(f"{path}: longer than {longest} characters")
        return value

    return decode


def _simple_decoder(kind: type, expected: str) -> _Decoder:
    def decode(value: Any, path: str) -> Any:
        if type(value) is not kind:
            raise _fail(path, expected, value)
        return value

    return decode


def _float_decoder(value: Any, path: str) -> float:
    if type(value) not in (float, int):
        raise _fail(path, "a number", value)
    return float(value)


def _enum_decoder(kind: type[enum.Enum]) -> _Decoder:
    members = {member.value: member for member in kind}
    names = ", ".join(repr(value) for value in members)

    def decode(value: Any, path: str) -> Any:
        try:
            return members[value]
        except (KeyError, TypeError):
            raise _fail(path, f"one of {names}", value) from None

    return decode


def _optional_decoder(inner: _Decoder) -> _Decoder:
    def decode(value: Any, path: str) -> Any:
        return None if value is None else inner(value, path)

    return decode


def _list_decoder(inner: _Decoder, max_len: int | None, as_tuple: bool) -> _Decoder:
    longest = MAX_LIST if max_len is None else max_len

    def decode(value: Any, path: str) -> Any:
        if type(value) is not list:
            raise _fail(path, "a list", value)
        if len(value) > longest:
            raise InvalidParamsError(f"{path}: more than {longest} items")
        items = [inner(item, f"{path}[{i}]") for i, item in enumerate(value)]
        return tuple(items) if as_tuple else items

    return decode


def _record_decoder(kinds: tuple[type[WireRecord], ...]) -> _Decoder:
    if len(kinds) == 1:
        kind = kinds[0]
        return lambda value, path: kind._decode(value, path)
    by_tag = {kind.TAG: kind for kind in kinds}
    return lambda value, path: decode_union(by_tag, value, path)


def decode_union(by_tag: dict[str, type[R]], value: Any, path: str) -> R:
    """Decode ``value`` as whichever record its ``_`` tag names among ``by_tag``."""
    if type(value) is not dict:
        raise _fail(path, "a map", value)
    tag = value.get("_")
    kind = by_tag.get(tag) if isinstance(tag, str) else None
    if kind is None:
        raise InvalidParamsError(f"{path}: unknown type {tag!r}; expected one of {sorted(by_tag)}")
    return kind._decode(value, path)


_PLAIN = frozenset({type(None), bool, int, float, str, bytes})


def _encode_value(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, WireRecord):
        return value.to_wire()
    if kind is tuple or kind is list:
        return [_encode_value(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _decoder_for(annotation: Any, limit: Limit = Limit()) -> _Decoder:  # noqa: B008
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        found = [m for m in annotation.__metadata__ if isinstance(m, Limit)]
        return _decoder_for(annotation.__origin__, found[0] if found else Limit())
    if origin in (types.UnionType, typing.Union):
        args = typing.get_args(annotation)
        non_none = tuple(arg for arg in args if arg is not type(None))
        if all(isinstance(arg, type) and issubclass(arg, WireRecord) for arg in non_none):
            inner = _record_decoder(non_none)
        elif len(non_none) == 1:
            inner = _decoder_for(non_none[0], limit)
        else:
            raise TypeError(f"unsupported union {annotation}")
        return _optional_decoder(inner) if len(non_none) < len(args) else inner
    if origin in (list, tuple):
        args = typing.get_args(annotation)
        return _list_decoder(_decoder_for(args[0]), limit.max_len, origin is tuple)
    if annotation is bool:
        return _simple_decoder(bool, "true or false")
    if annotation is int:
        return _int_decoder(limit.low, limit.high)
    if annotation is str:
        return _str_decoder(limit.max_len)
    if annotation is bytes:
        return _simple_decoder(bytes, "bytes")
    if annotation is float:
        return _float_decoder
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_decoder(annotation)
    if isinstance(annotation, type) and issubclass(annotation, WireRecord):
        return _record_decoder((annotation,))
    raise TypeError(f"unsupported wire field type {annotation!r}")


class WireRecord:
    """Base of every record on the wire. Subclasses are frozen dataclasses with a ``TAG``."""

    __slots__ = ()

    TAG: ClassVar[str] = ""
    _plan: ClassVar[tuple[tuple[str, _Decoder, bool], ...] | None] = None
    _names: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _build_plan(cls) -> tuple[tuple[str, _Decoder, bool], ...]:
        hints = typing.get_type_hints(cls, include_extras=True)
        plan = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            plan.append((f.name, _decoder_for(hints[f.name]), required))
        cls._plan = tuple(plan)
        return cls._plan

    @classmethod
    def _decode(cls, value: Any, path: str) -> Self:
        if type(value) is not dict:
            raise _fail(path or cls.__name__, "a map", value)
        plan = cls._plan if cls.__dict__.get("_plan") else cls._build_plan()
        assert plan is not None
        prefix = f"{path}." if path else ""
        arguments: dict[str, Any] = {}
        for name, decoder, required in plan:
            if name in value:
                arguments[name] = decoder(value[name], prefix + name)
            elif required:
                raise InvalidParamsError(f"{prefix}{name}: missing")
        return cls(**arguments)

    @classmethod
    def from_wire(cls, value: Any, path: str = "") -> Self:
        """Decode and validate; ``InvalidParamsError`` names the first bad field."""
        return cls._decode(value, path)

    def to_wire(self) -> dict[str, Any]:
        """This record as a msgpack-ready map (with ``_`` set to ``TAG`` if it has one)."""
        names = type(self).__dict__.get("_names") or type(self)._build_names()
        encoded: dict[str, Any] = {"_": self.TAG} if self.TAG else {}
        plain = _PLAIN
        for name in names:
            value = getattr(self, name)
            encoded[name] = value if type(value) in plain else _encode_value(value)
        return encoded

    @classmethod
    def _build_names(cls) -> tuple[str, ...]:
        names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
        cls._names = names
        return names
