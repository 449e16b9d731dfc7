"""Tests for ``sync.protocol.framing`` and ``sync.protocol.errors``.

Frames are a 4-byte big-endian length followed by one msgpack map. The tests cover
the round trip, cutting a byte stream into frames at arbitrary points, the size
limit, every kind of malformed body, and the error frames' wire form.
"""

from __future__ import annotations

import struct

import msgpack
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sync.protocol.errors import (
    ErrorCode,
    FrameTooLargeError,
    FramingError,
    InvalidParamsError,
    MalformedFrameError,
    ProtocolError,
    RpcError,
    UnknownMethodError,
)
from sync.protocol.framing import (
    DEFAULT_MAX_FRAME_SIZE,
    MAX_COLLECTION_LENGTH,
    MAX_DEPTH,
    FrameDecoder,
    decode_body,
    encode_frame,
)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# --------------------------------------------------------------------------- helpers


def _header(length):
    return struct.pack(">I", length)


def _pack(value):
    """Raw msgpack bytes, bypassing ``encode_frame`` (for bodies it would never make)."""
    return msgpack.packb(value, use_bin_type=True, strict_types=False)


def _depth(value):
    """Nesting depth as ``decode_body`` counts it: the root map is level 1."""
    if isinstance(value, dict):
        return 1 + max((_depth(child) for child in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(child) for child in value), default=0)
    return 0


def _nested(depth, *, use_list=False, leaf=None):
    """A map whose containers nest exactly ``depth`` levels (root map included)."""
    value = leaf
    for _ in range(depth - 1):
        value = [value] if use_list else {"k": value}
    return {"k": value}


def _assert_same(actual, expected):
    """Equality that also tells bool from int, int from float, str from bytes, and -0.0."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert type(key) is str
            _assert_same(actual[key], expected[key])
    elif isinstance(expected, list):
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected, strict=True):
            _assert_same(got, want)
    elif isinstance(expected, float):
        assert struct.pack(">d", actual) == struct.pack(">d", expected)
    else:
        assert actual == expected


def _feed_in_chunks(decoder, data, cuts):
    bodies = []
    start = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        bodies.extend(decoder.feed(data[start:cut]))
        start = cut
    return bodies


# --------------------------------------------------------------------------- strategies

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=INT64_MIN, max_value=INT64_MAX),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
)


def _extend(children):
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(), children, max_size=5),
    )


values = st.recursive(scalars, _extend, max_leaves=25)

#: Maps whose nesting stays within the limit (``recursive`` does not bound depth itself).
payloads = st.dictionaries(st.text(), values, max_size=6).filter(
    lambda payload: _depth(payload) <= MAX_DEPTH
)


@st.composite
def deep_payloads(draw):
    """A chain of maps and lists exactly ``depth`` levels deep, for ``depth`` up to the limit."""
    depth = draw(st.integers(min_value=1, max_value=MAX_DEPTH))
    value = draw(scalars)
    for _ in range(depth - 1):
        value = [value] if draw(st.booleans()) else {draw(st.text(max_size=3)): value}
    payload = {draw(st.text(max_size=3)): value}
    assert _depth(payload) == depth
    return payload


any_payload = st.one_of(payloads, deep_payloads())


# --------------------------------------------------------------------------- round trip


def _round_trip(payload):
    frame = encode_frame(payload)
    decoder = FrameDecoder()
    bodies = decoder.feed(frame)
    assert len(bodies) == 1
    assert decoder.buffered == 0
    return decode_body(bodies[0])


@given(any_payload)
@example({})
@example({"": None})
@example({"ints": [0, -1, 127, 128, -32, -33, INT64_MIN, INT64_MAX]})
@example({"floats": [0.0, -0.0, 1.5, float("inf"), float("-inf"), 5e-324]})
@example({"types": [True, 1, 1.0, "1", b"1"]})
@example({"unicode": "žluťoučký 🐴 \u0000 \ud7ff \ue000"})
def test_round_trip(payload):
    _assert_same(_round_trip(payload), payload)


def test_round_trip_of_a_typical_request():
    payload = {
        "id": 17,
        "method": "messages.send",
        "params": {"peer": 4294968297, "text": "hello", "attachments": [b"\x00\xff"], "x": None},
    }
    _assert_same(_round_trip(payload), payload)


@pytest.mark.parametrize("use_list", [False, True], ids=["maps", "lists"])
def test_round_trip_at_exactly_max_depth(use_list):
    payload = _nested(MAX_DEPTH, use_list=use_list)
    assert _depth(payload) == MAX_DEPTH
    _assert_same(_round_trip(payload), payload)


def test_round_trip_of_a_collection_of_exactly_max_length():
    payload = {"items": [0] * MAX_COLLECTION_LENGTH}
    _assert_same(_round_trip(payload), payload)


def test_round_trip_of_a_map_of_exactly_max_length():
    payload = {"m": {str(i): i for i in range(MAX_COLLECTION_LENGTH)}}
    _assert_same(_round_trip(payload), payload)


@given(any_payload)
def test_encode_frame_is_a_length_prefix_and_one_msgpack_map(payload):
    frame = encode_frame(payload)
    (length,) = struct.unpack(">I", frame[:4])
    assert length == len(frame) - 4
    decoded = msgpack.unpackb(frame[4:], raw=False)
    assert isinstance(decoded, dict)


def test_encode_frame_keeps_str_and_bytes_apart():
    body = encode_frame({"s": "a", "b": b"a"})[4:]
    assert msgpack.unpackb(body, raw=False) == {"s": "a", "b": b"a"}
    assert b"\xc4\x01a" in body  # bin 8, not a raw str


def test_decode_body_accepts_a_body_of_exactly_max_size():
    body = encode_frame({"k": "v" * 50})[4:]
    assert decode_body(body, max_size=len(body)) == {"k": "v" * 50}


@given(st.binary(max_size=64), st.integers(min_value=0, max_value=64))
def test_decode_body_refuses_a_body_over_max_size(body, max_size):
    body = b"\x81\xa1k\xc4" + bytes([len(body)]) + body
    if len(body) > max_size:
        with pytest.raises(FrameTooLargeError):
            decode_body(body, max_size=max_size)
    else:
        assert decode_body(body, max_size=max_size) == {"k": body[5:]}


# --------------------------------------------------------------------------- stream splitting


@given(st.lists(any_payload, min_size=1, max_size=4), st.data())
def test_frames_survive_arbitrary_chunking(frame_payloads, data):
    frames = [encode_frame(payload) for payload in frame_payloads]
    stream = b"".join(frames)
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=20))
    decoder = FrameDecoder()
    bodies = _feed_in_chunks(decoder, stream, cuts)
    assert bodies == [frame[4:] for frame in frames]
    assert decoder.buffered == 0


@given(st.lists(any_payload, min_size=1, max_size=4))
def test_frames_survive_one_byte_chunks(frame_payloads):
    frames = [encode_frame(payload) for payload in frame_payloads]
    stream = b"".join(frames)
    decoder = FrameDecoder()
    bodies = []
    for index in range(len(stream)):
        bodies.extend(decoder.feed(stream[index : index + 1]))
        assert decoder.buffered == index + 1 - sum(len(body) + 4 for body in bodies)
    assert bodies == [frame[4:] for frame in frames]
    assert decoder.buffered == 0


@given(st.lists(st.binary(max_size=40), min_size=1, max_size=6), st.data())
def test_decoder_cuts_arbitrary_bodies(raw_bodies, data):
    """The decoder does not look inside bodies: any bytes come back as they went in."""
    stream = b"".join(_header(len(body)) + body for body in raw_bodies)
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=10))
    decoder = FrameDecoder(max_size=40)
    assert _feed_in_chunks(decoder, stream, cuts) == raw_bodies
    assert decoder.buffered == 0


def test_decoder_round_trips_a_stream_end_to_end():
    frame_payloads = [{"n": i, "pad": "x" * i} for i in range(10)]
    stream = b"".join(encode_frame(payload) for payload in frame_payloads)
    decoder = FrameDecoder()
    bodies = _feed_in_chunks(decoder, stream, range(0, len(stream), 7))
    assert [decode_body(body) for body in bodies] == frame_payloads


def test_feed_of_nothing_returns_nothing():
    decoder = FrameDecoder()
    assert decoder.feed(b"") == []
    assert decoder.buffered == 0


def test_partial_frame_is_buffered_until_complete():
    frame = encode_frame({"a": 1})
    decoder = FrameDecoder()
    assert decoder.feed(frame[:-1]) == []
    assert decoder.buffered == len(frame) - 1
    assert decoder.feed(frame[-1:]) == [frame[4:]]
    assert decoder.buffered == 0


def test_several_frames_in_one_feed_come_back_in_order_and_leave_the_rest():
    first, second, third = (encode_frame({"n": n}) for n in range(3))
    decoder = FrameDecoder()
    assert decoder.feed(first + second + third[:3]) == [first[4:], second[4:]]
    assert decoder.buffered == 3
    assert decoder.feed(third[3:]) == [third[4:]]
    assert decoder.buffered == 0


def test_empty_body_is_cut_as_an_empty_frame():
    decoder = FrameDecoder()
    assert decoder.feed(_header(0) + _header(0)) == [b"", b""]
    assert decoder.buffered == 0


# --------------------------------------------------------------------------- size limits


@pytest.mark.parametrize("max_size", [0, 1, 10, 1000])
def test_length_over_max_size_is_refused_as_soon_as_the_header_arrives(max_size):
    header = _header(max_size + 1)
    decoder = FrameDecoder(max_size=max_size)
    for byte in header[:3]:
        assert decoder.feed(bytes([byte])) == []
    with pytest.raises(FrameTooLargeError) as info:
        decoder.feed(header[3:])
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE
    assert isinstance(info.value, FramingError)
    # Nothing of the body was needed, and the buffer holds no more than the header.
    assert decoder.buffered <= 4


@given(
    st.integers(min_value=0, max_value=1 << 16),
    st.integers(min_value=1, max_value=2**32 - 1),
    st.binary(max_size=8),
)
def test_any_length_over_max_size_is_refused(max_size, excess, tail):
    length = min(max_size + excess, 2**32 - 1)
    assert length > max_size
    decoder = FrameDecoder(max_size=max_size)
    with pytest.raises(FrameTooLargeError):
        decoder.feed(_header(length) + tail)


def test_default_limit_refuses_the_largest_length():
    with pytest.raises(FrameTooLargeError):
        FrameDecoder().feed(b"\xff\xff\xff\xff")
    assert FrameDecoder().max_size == DEFAULT_MAX_FRAME_SIZE


@pytest.mark.parametrize("max_size", [0, 1, 10, 1000])
def test_length_of_exactly_max_size_is_accepted(max_size):
    decoder = FrameDecoder(max_size=max_size)
    body = bytes(range(256)) * (max_size // 256) + bytes(max_size % 256)
    if max_size:
        assert decoder.feed(_header(max_size)) == []
        assert decoder.feed(body) == [body]
    else:
        assert decoder.feed(_header(max_size)) == [b""]
    assert decoder.buffered == 0


def test_frame_of_exactly_max_size_decodes():
    frame = encode_frame({"blob": b"\x01" * 200})
    max_size = len(frame) - 4
    bodies = FrameDecoder(max_size=max_size).feed(frame)
    assert decode_body(bodies[0], max_size=max_size) == {"blob": b"\x01" * 200}


def test_frames_before_an_oversized_length_are_still_delivered_when_fed_separately():
    good = encode_frame({"ok": True})
    decoder = FrameDecoder(max_size=len(good))
    assert decoder.feed(good) == [good[4:]]
    with pytest.raises(FrameTooLargeError):
        decoder.feed(_header(len(good) + 1))


def test_decoder_stays_refusing_after_an_oversized_length():
    decoder = FrameDecoder(max_size=8)
    with pytest.raises(FrameTooLargeError):
        decoder.feed(_header(9))
    with pytest.raises(FrameTooLargeError):
        decoder.feed(b"more")


@given(st.integers(min_value=0, max_value=32), st.binary(max_size=200), st.data())
def test_decoder_on_arbitrary_bytes_never_buffers_more_than_one_frame(max_size, stream, data):
    """Either frames come out or ``FrameTooLargeError``; the buffer stays under one frame."""
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=8))
    decoder = FrameDecoder(max_size=max_size)
    start = 0
    try:
        for cut in [*sorted(set(cuts)), len(stream)]:
            for body in decoder.feed(stream[start:cut]):
                assert len(body) <= max_size
            start = cut
            assert decoder.buffered < 4 + max_size
    except FrameTooLargeError:
        pass


# --------------------------------------------------------------------------- one at a time


def test_next_body_hands_out_one_frame_at_a_time():
    first, second = encode_frame({"n": 1}), encode_frame({"n": 2})
    decoder = FrameDecoder()
    assert decoder.next_body() is None
    decoder.add(first + second[:2])
    assert decoder.next_body() == first[4:]
    assert decoder.buffered == 2
    assert decoder.next_body() is None
    decoder.add(second[2:])
    assert decoder.next_body() == second[4:]
    assert decoder.next_body() is None
    assert decoder.buffered == 0


def test_next_body_judges_each_frame_by_the_limit_in_force_when_it_is_taken():
    small, large = encode_frame({"n": 1}), encode_frame({"blob": b"x" * 100})
    decoder = FrameDecoder(max_size=len(small) - 4)
    decoder.add(small + large)
    assert decoder.next_body() == small[4:]
    with pytest.raises(FrameTooLargeError):
        decoder.next_body()
    decoder.max_size = len(large) - 4  # as a server does once a connection authorized
    assert decoder.next_body() == large[4:]


def test_next_body_refuses_a_length_over_the_limit_before_its_body_arrives():
    decoder = FrameDecoder(max_size=10)
    decoder.add(_header(11))
    with pytest.raises(FrameTooLargeError, match="frame of 11 bytes exceeds the limit of 10"):
        decoder.next_body()
    with pytest.raises(FrameTooLargeError):
        decoder.next_body()  # and again, the stream being broken there
    assert decoder.buffered == 4


@given(st.lists(st.binary(max_size=40), max_size=8), st.data())
def test_next_body_cuts_what_feed_cuts(raw_bodies, data):
    stream = b"".join(_header(len(body)) + body for body in raw_bodies)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(stream)), max_size=6))))
    decoder = FrameDecoder(max_size=40)
    taken: list[bytes] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        decoder.add(stream[start:cut])
        start = cut
        while (body := decoder.next_body()) is not None:
            taken.append(body)
    assert taken == raw_bodies
    assert decoder.buffered == 0


# --------------------------------------------------------------------------- malformed bodies

_MAP_KEY_A = b"\x81\xa1a"  # fixmap of 1 entry, key "a"; append one value

MALFORMED_BODIES = {
    # not msgpack at all / cut short
    "empty": b"",
    "reserved byte 0xc1": b"\xc1",
    "map cut short": b"\x82\xa1a\x01",
    "str cut short": _MAP_KEY_A + b"\xa5abc",
    "str32 length beyond the body": _MAP_KEY_A + b"\xdb\xff\xff\xff\xff",
    "bin cut short": _MAP_KEY_A + b"\xc4\x05ab",
    "int cut short": _MAP_KEY_A + b"\xcf\x00\x00",
    # trailing bytes after the map
    "trailing byte": _pack({"a": 1}) + b"\x00",
    "two maps": _pack({"a": 1}) + _pack({"b": 2}),
    # top level not a map
    "top-level nil": _pack(None),
    "top-level int": _pack(1),
    "top-level str": _pack("map"),
    "top-level bytes": _pack(b"map"),
    "top-level list": _pack([{"a": 1}]),
    "top-level bool": _pack(True),
    "top-level float": _pack(1.5),
    # keys that are not str
    "int key": _pack({1: "a"}),
    "nil key": b"\x81\xc0\x01",
    "bool key": b"\x81\xc3\x01",
    "float key": _pack({1.5: "a"}),
    "bytes key": _pack({b"a": 1}),
    "list key": b"\x81\x91\x01\x01",
    "map key": b"\x81\x80\x01",
    "int key in a nested map": _pack({"a": {1: "b"}}),
    "bytes key in a nested map": _pack({"a": {b"b": 1}}),
    "bytes key in a map inside a list": _pack({"a": [{b"b": 1}]}),
    # extension types
    "ext type 5": _MAP_KEY_A + _pack(msgpack.ExtType(5, b"abc")),
    "ext type 0": _MAP_KEY_A + _pack(msgpack.ExtType(0, b"x")),
    "ext type -1 (timestamp 32)": _MAP_KEY_A + _pack(msgpack.Timestamp(1, 0)),
    "ext type -1 (timestamp 64)": _MAP_KEY_A + _pack(msgpack.Timestamp(1, 5)),
    "ext type -1 (timestamp 96)": _MAP_KEY_A + _pack(msgpack.Timestamp(-1, 0)),
    "top-level timestamp": _pack(msgpack.Timestamp(1, 0)),
    "empty ext8 of type 5": _MAP_KEY_A + b"\xc7\x00\x05",
    "empty ext8 of type -1": _MAP_KEY_A + b"\xc7\x00\xff",
    "ext type -128": _MAP_KEY_A + b"\xd4\x80\x00",
    "ext inside a list": _pack({"a": [1, msgpack.ExtType(1, b"x")]}),
    # nesting deeper than MAX_DEPTH
    "maps one level too deep": _pack(_nested(MAX_DEPTH + 1)),
    "lists one level too deep": _pack(_nested(MAX_DEPTH + 1, use_list=True)),
    "empty map one level too deep": _pack(_nested(MAX_DEPTH, leaf={})),
    "empty list one level too deep": _pack(_nested(MAX_DEPTH, leaf=[])),
    "very deep lists": _MAP_KEY_A + b"\x91" * 5000 + b"\xc0",
    "very deep maps": _MAP_KEY_A * 5000 + b"\xc0",
    # collections longer than MAX_COLLECTION_LENGTH
    "array one item too long": _MAP_KEY_A
    + b"\xdd"
    + _header(MAX_COLLECTION_LENGTH + 1)
    + b"\xc0" * (MAX_COLLECTION_LENGTH + 1),
    "map one entry too long": _pack({str(i): 0 for i in range(MAX_COLLECTION_LENGTH + 1)}),
    "array32 claiming 2**32-1 items": _MAP_KEY_A + b"\xdd\xff\xff\xff\xff",
    "map32 claiming 2**32-1 entries": b"\xdf\xff\xff\xff\xff",
    # strings that are not UTF-8
    "invalid utf-8 value": _MAP_KEY_A + b"\xa1\xff",
    "invalid utf-8 key": b"\x81\xa1\xff\x01",
    "utf-8 encoded surrogate": _MAP_KEY_A + b"\xa3\xed\xa0\x80",
    "overlong utf-8": _MAP_KEY_A + b"\xa2\xc0\xaf",
    "truncated utf-8 sequence": _MAP_KEY_A + b"\xa2\xe2\x82",
    "invalid utf-8 inside a list": _pack({"a": ["ok"]})[:-3] + b"\xa2\xc3\x28",
}


@pytest.mark.parametrize("body", MALFORMED_BODIES.values(), ids=MALFORMED_BODIES.keys())
def test_malformed_body_raises_malformed_frame_error(body):
    with pytest.raises(MalformedFrameError) as info:
        decode_body(body)
    error = info.value
    assert type(error) is MalformedFrameError
    assert error.code is ErrorCode.MALFORMED_FRAME
    assert error.to_wire()["code"] == "MALFORMED_FRAME"
    assert isinstance(error.message, str)
    assert error.message


def test_malformed_bodies_do_not_break_the_stream():
    """Each bad body is cut like any other, and the frame after it still decodes."""
    good = {"after": True}
    stream = b"".join(
        _header(len(body)) + body + encode_frame(good) for body in MALFORMED_BODIES.values()
    )
    decoder = FrameDecoder()
    bodies = _feed_in_chunks(decoder, stream, range(0, len(stream), 4093))
    assert decoder.buffered == 0
    assert len(bodies) == 2 * len(MALFORMED_BODIES)
    for bad, after in zip(bodies[::2], bodies[1::2], strict=True):
        with pytest.raises(MalformedFrameError):
            decode_body(bad)
        assert decode_body(after) == good


def test_nesting_limit_counts_the_root_map():
    """Exactly MAX_DEPTH levels decode, one more does not (positive control for the above)."""
    assert decode_body(_pack(_nested(MAX_DEPTH))) == _nested(MAX_DEPTH)
    with pytest.raises(MalformedFrameError):
        decode_body(_pack(_nested(MAX_DEPTH + 1)))


def test_scalars_at_the_deepest_level_are_allowed():
    payload = _nested(MAX_DEPTH, leaf="leaf")
    assert decode_body(_pack(payload)) == payload


def test_non_map_top_level_is_refused_even_when_it_would_be_valid_inside_a_map():
    assert decode_body(_pack({"a": [1, 2]})) == {"a": [1, 2]}
    with pytest.raises(MalformedFrameError):
        decode_body(_pack([1, 2]))


# --------------------------------------------------------------------------- arbitrary bytes


def _decode_or_refuse(body, max_size=DEFAULT_MAX_FRAME_SIZE):
    try:
        value = decode_body(body, max_size=max_size)
    except (MalformedFrameError, FrameTooLargeError):
        return None
    assert isinstance(value, dict)
    assert all(type(key) is str for key in value)
    assert _depth(value) <= MAX_DEPTH
    return value


@given(st.binary(max_size=512))
@example(b"\x80")
@example(b"\xdd\x00\x01\x86\xa0")
@example(b"\x91" * 100_000)
def test_arbitrary_bytes_decode_to_a_map_or_raise_a_protocol_error(body):
    _decode_or_refuse(body)


@given(st.binary(max_size=64), st.integers(min_value=0, max_value=64))
def test_arbitrary_bytes_with_a_small_limit(body, max_size):
    _decode_or_refuse(body, max_size=max_size)


@st.composite
def mutated_bodies(draw):
    """Valid bodies with a few bytes changed, dropped or added: mostly almost-msgpack."""
    body = bytearray(encode_frame(draw(payloads))[4:])
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        action = draw(st.sampled_from(["replace", "delete", "insert", "truncate"]))
        index = draw(st.integers(min_value=0, max_value=len(body)))
        if action == "replace" and index < len(body):
            body[index] = draw(st.integers(min_value=0, max_value=255))
        elif action == "delete" and index < len(body):
            del body[index]
        elif action == "insert":
            body[index:index] = draw(st.binary(min_size=1, max_size=5))
        else:
            del body[index:]
    return bytes(body)


@given(mutated_bodies())
def test_mutated_bodies_decode_to_a_map_or_raise_a_protocol_error(body):
    _decode_or_refuse(body)


# --------------------------------------------------------------------------- errors

ALL_ERRORS = [
    ProtocolError,
    FramingError,
    FrameTooLargeError,
    MalformedFrameError,
    UnknownMethodError,
    InvalidParamsError,
    RpcError,
]


@pytest.mark.parametrize("error_type", ALL_ERRORS, ids=lambda t: t.__name__)
def test_to_wire_gives_code_and_message_strings(error_type):
    error = error_type("something broke")
    wire = error.to_wire()
    assert set(wire) == {"code", "message"}
    assert type(wire["code"]) is str
    assert type(wire["message"]) is str
    assert wire["code"] == error.code.value
    assert wire["message"] == "something broke"
    # The wire form is itself a valid frame payload.
    assert msgpack.unpackb(encode_frame(wire)[4:], raw=False) == wire


def test_error_codes_of_the_typed_errors():
    assert FrameTooLargeError("x").code is ErrorCode.FRAME_TOO_LARGE
    assert MalformedFrameError("x").code is ErrorCode.MALFORMED_FRAME
    assert UnknownMethodError("x").code is ErrorCode.UNKNOWN_METHOD
    assert InvalidParamsError("x").code is ErrorCode.INVALID_PARAMS


def test_error_hierarchy():
    assert issubclass(FrameTooLargeError, FramingError)
    assert issubclass(FramingError, ProtocolError)
    assert issubclass(MalformedFrameError, ProtocolError)
    assert not issubclass(MalformedFrameError, FramingError)
    assert not issubclass(FrameTooLargeError, MalformedFrameError)
    assert issubclass(RpcError, ProtocolError)


def test_explicit_code_overrides_the_class_code_only_for_that_instance():
    error = InvalidParamsError("slow down", ErrorCode.FLOOD)
    assert error.code is ErrorCode.FLOOD
    assert error.to_wire() == {"code": "FLOOD", "message": "slow down"}
    assert InvalidParamsError("x").code is ErrorCode.INVALID_PARAMS
    assert str(error) == "FLOOD: slow down"


@given(st.sampled_from(list(ErrorCode)), st.text())
def test_rpc_error_from_wire_round_trips_codes_and_messages(code, message):
    # A flood wait says how long (a FLOOD_WAIT without its seconds is malformed).
    seconds = 7 if code is ErrorCode.FLOOD_WAIT else None
    wire = ProtocolError(message, code, seconds=seconds).to_wire()
    error = RpcError.from_wire(wire)
    assert isinstance(error, RpcError)
    assert error.code is code
    assert error.message == message
    assert error.to_wire() == wire


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_rpc_error_from_wire_accepts_every_code_as_plain_string(code):
    wire: dict[str, object] = {"code": code.value, "message": "m"}
    if code is ErrorCode.FLOOD_WAIT:
        wire["seconds"] = 7
    error = RpcError.from_wire(wire)
    assert error.code is code
    assert error.message == "m"


@given(
    st.one_of(
        st.text().filter(lambda text: text not in set(ErrorCode)),
        st.none(),
        st.integers(),
        st.binary(),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    ),
    st.text(),
)
@example("flood", "lower case is not a code")
@example("NOT_A_CODE", "the text")
@example(b"FLOOD", "bytes are not a code")
def test_rpc_error_from_wire_maps_an_unknown_code_to_internal(raw_code, message):
    error = RpcError.from_wire({"code": raw_code, "message": message})
    assert error.code is ErrorCode.INTERNAL
    assert message in error.message
    assert repr(raw_code) in error.message


def test_rpc_error_from_wire_without_a_code_is_internal():
    error = RpcError.from_wire({"message": "no code here"})
    assert error.code is ErrorCode.INTERNAL
    assert "no code here" in error.message


@pytest.mark.parametrize(
    "error",
    [None, "FLOOD", b"FLOOD", 42, 1.5, True, ["FLOOD", "m"], ("FLOOD", "m")],
    ids=repr,
)
def test_rpc_error_from_wire_tolerates_a_non_dict(error):
    result = RpcError.from_wire(error)
    assert isinstance(result, RpcError)
    assert isinstance(result.code, ErrorCode)
    assert isinstance(result.message, str)
    wire = result.to_wire()
    assert type(wire["code"]) is str
    assert type(wire["message"]) is str


@pytest.mark.parametrize("message", [None, 42, b"bytes", ["a"], {"a": 1}], ids=repr)
def test_rpc_error_from_wire_with_a_known_code_and_a_non_str_message(message):
    error = RpcError.from_wire({"code": "FLOOD", "message": message})
    assert error.code is ErrorCode.FLOOD
    assert error.message == ""


def test_rpc_error_from_wire_ignores_extra_keys():
    error = RpcError.from_wire({"code": "AUTH_FAILED", "message": "no", "extra": [1, 2]})
    assert error.code is ErrorCode.AUTH_FAILED
    assert error.message == "no"
