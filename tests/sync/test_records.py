"""Tests for the wire records (``sync.protocol.schema``, ``types``, ``methods``).

The records' wire form is fixed: the same map keys and ``_`` tags, encoded to the very
bytes the earlier dataclass encoder made, so an old client and a new server still talk.
Bounds refuse what they always refused, with the path of the bad field. A client's
``decode_server_frame`` keeps the frame checks of ``decode_body``, whatever the bytes.
"""

from __future__ import annotations

import struct

import msgpack
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sync.protocol import (
    ANY_UPDATE,
    MAX_DEPTH,
    MAX_LIST,
    MAX_TEXT,
    METHODS,
    ChannelPts,
    Difference,
    ErrorFrame,
    ForwardHeader,
    FrameTooLargeError,
    InvalidParamsError,
    MalformedFrameError,
    Media,
    MediaKind,
    Message,
    Peer,
    Presence,
    PresenceStatus,
    ProtocolError,
    PushFrame,
    ResultFrame,
    SendMessage,
    ShortMessage,
    State,
    UpdateDeleteMessages,
    UpdateNewMessage,
    UpdatePeer,
    Updates,
    UpdatesTooLong,
    UpdateUserStatus,
    decode_body,
    decode_server_frame,
    decode_update,
    encode_frame,
    encode_push,
    encode_result,
    parse_request,
    parse_server_frame,
)

USER = 42
MESSAGE = Message(
    USER,
    7,
    1_700_000_000,
    False,
    "hi",
    USER,
    (Media(MediaKind.PHOTO, 9, 100, None, "cat"),),
    3,
    None,
    ForwardHeader(43, 1_600_000_000),
)
#: ``MESSAGE`` as the dataclass records wrote it: every field, in order, none left out
#: (with the media's glyph, added since, as ``None``).
MESSAGE_MAP = {
    "peer": USER,
    "id": 7,
    "date": 1_700_000_000,
    "out": False,
    "text": "hi",
    "author": USER,
    "media": [{"kind": "photo", "id": 9, "size": 100, "url": None, "title": "cat", "glyph": None}],
    "reply_to": 3,
    "edit_date": None,
    "forward": {"author": 43, "date": 1_600_000_000, "channel": None, "channel_post": None},
}
STATE = State(10, 2, 3, 1_700_000_100)
DIFFERENCE = Difference(
    (MESSAGE,) * 4,
    (UpdateDeleteMessages(USER, (1, 2), 9, 2),),
    (Peer(USER, "Alice", "alice", 5),),
    STATE,
    (Presence(USER, PresenceStatus.ONLINE, 5),),
    (ChannelPts(2**57 + 1, 4),),
)


def _packed(value):
    return msgpack.packb(value, use_bin_type=True)


def _frame_body(payload):
    return encode_frame(payload)[4:]


def _difference_map(**changes):
    wire = DIFFERENCE.to_wire()
    wire.update(changes)
    return wire


# --------------------------------------------------------------------------- the wire form


def test_a_tagged_record_on_the_wire_has_its_tag_first_and_every_field():
    wire = UpdateNewMessage(MESSAGE, 12, 1).to_wire()
    assert list(wire) == ["_", "message", "pts", "pts_count"]
    assert msgpack.unpackb(_packed(wire)) == {
        "_": "newMessage",
        "message": MESSAGE_MAP,
        "pts": 12,
        "pts_count": 1,
    }
    assert UpdatesTooLong().to_wire() == {"_": "updatesTooLong"}


def test_frames_are_the_bytes_the_dataclass_records_made():
    push = Updates((UpdateNewMessage(MESSAGE, 12, 1), UpdatePeer(Peer(USER, "A"))), seq=4)
    expected = {
        "push": "updates",
        "updates": {
            "_": "updates",
            "updates": [
                {"_": "newMessage", "message": MESSAGE_MAP, "pts": 12, "pts_count": 1},
                {
                    "_": "peer",
                    "peer": {
                        "id": USER,
                        "name": "A",
                        "username": None,
                        "access_hash": 0,
                        "flags": 0,
                    },
                },
            ],
            "peers": [],
            "date": 0,
            "seq_start": 0,
            "seq": 4,
        },
    }
    body = _packed(expected)
    assert encode_frame(encode_push(push)) == struct.pack(">I", len(body)) + body


def test_a_blob_the_old_server_stored_still_decodes():
    blob = _packed({"_": "newMessage", "message": MESSAGE_MAP, "pts": 12, "pts_count": 1})
    assert ANY_UPDATE.decode(blob) == UpdateNewMessage(MESSAGE, 12, 1)
    assert decode_update(msgpack.unpackb(blob)) == UpdateNewMessage(MESSAGE, 12, 1)


def test_records_are_frozen_and_replace_makes_a_copy():
    with pytest.raises(AttributeError):
        MESSAGE.text = "changed"  # type: ignore[misc]
    edited = msgspec.structs.replace(MESSAGE, text="edited")
    assert (edited.text, MESSAGE.text) == ("edited", "hi")


def test_a_short_message_stands_for_a_new_message_update():
    short = ShortMessage(7, USER, True, "hi", 1_700_000_000, 12, 1, reply_to=3)
    update = short.as_update(self_id=1)
    assert update == UpdateNewMessage(Message(USER, 7, 1_700_000_000, True, "hi", 1, (), 3), 12, 1)


# --------------------------------------------------------------------------- bounds

REFUSED_PARAMS: dict[str, tuple[dict[str, object], str]] = {
    "negative peer": ({"peer": -1}, "params.peer"),
    "peer beyond int64": ({"peer": 2**63}, "params.peer"),
    "random_id beyond int64": ({"random_id": 2**64 - 1}, "params.random_id"),
    "a bool for an int": ({"peer": True}, "params.peer"),
    "a float for an int": ({"peer": 1.0}, "params.peer"),
    "text too long": ({"text": "x" * (MAX_TEXT + 1)}, "params.text"),
    "bytes for a string": ({"text": b"hi"}, "params.text"),
    "too much media": ({"media": [{"kind": "photo", "id": 1}] * 11}, "params.media"),
    "unknown media kind": (
        {"media": [{"kind": "photo", "id": 1}, {"kind": "x", "id": 1}]},
        "params.media[1].kind",
    ),
    "media id beyond int64": (
        {"media": [{"kind": "photo", "id": -(2**63) - 1}]},
        "params.media[0].id",
    ),
    "reply_to zero": ({"reply_to": 0}, "params.reply_to"),
    "reply_to beyond int32": ({"reply_to": 2**31}, "params.reply_to"),
    "text missing": ({"text": None}, "params.text"),
}


@pytest.mark.parametrize("case", list(REFUSED_PARAMS))
def test_out_of_bounds_params_are_refused_naming_the_field(case):
    changes, path = REFUSED_PARAMS[case]
    params: dict[str, object] = {"peer": USER, "text": "hi", "random_id": 5, **changes}
    params = {key: value for key, value in params.items() if value is not None}
    with pytest.raises(InvalidParamsError) as info:
        parse_request({"id": 1, "method": "sendMessage", "params": params})
    assert info.value.message.startswith(f"{path}: "), info.value.message


def test_params_within_bounds_are_accepted_and_unknown_keys_ignored():
    request = parse_request(
        {
            "id": 1,
            "method": "sendMessage",
            "params": {"peer": 2**63 - 1, "text": "x" * MAX_TEXT, "random_id": -(2**63), "new": 1},
        }
    )
    assert request.params == SendMessage(2**63 - 1, "x" * MAX_TEXT, -(2**63))


REFUSED_RESULTS = {
    "date of the 4th message": (
        _difference_map(new_messages=[MESSAGE_MAP] * 3 + [{**MESSAGE_MAP, "date": "x"}]),
        "result.new_messages[3].date",
    ),
    "counter beyond int32": (
        _difference_map(state={"pts": 2**31, "qts": 0, "seq": 0, "date": 0}),
        "result.state.pts",
    ),
    "a field missing": (
        _difference_map(state={"pts": 1, "qts": 0, "seq": 0}),
        "result.state.date",
    ),
    "an unknown update": (
        _difference_map(other_updates=[{"_": "noSuchUpdate"}]),
        "result.other_updates[0]._",
    ),
    "too many peers": (
        _difference_map(peers=[{"id": 1, "name": "p"}] * (MAX_LIST + 1)),
        "result.peers",
    ),
    "an unknown difference": ({"_": "differenceOfOpinion"}, "result._"),
    "not a map": ([1, 2], "result"),
    "a message dated past 2106": (
        _difference_map(new_messages=[{**MESSAGE_MAP, "date": 2**32}]),
        "result.new_messages[0].date",
    ),
    "a negative date": (
        _difference_map(state={"pts": 1, "qts": 0, "seq": 0, "date": -1}),
        "result.state.date",
    ),
}


def test_dates_past_2038_travel_in_64_bits_both_ways():
    """2038-01-19T03:14:08Z and later: past signed 32-bit time, read back as sent."""
    late = 2**31 + 7
    result = _difference_map(
        new_messages=[{**MESSAGE_MAP, "date": late, "edit_date": 2**40}],
        state={"pts": 1, "qts": 0, "seq": 0, "date": 2**40},
    )
    frame = decode_server_frame(_frame_body({"id": 3, "result": result}))
    assert isinstance(frame, ResultFrame)
    decoded = METHODS["getDifference"].decode_result(frame.result)
    assert METHODS["getDifference"].decode_result(result) == decoded
    assert isinstance(decoded, Difference)
    message = decoded.new_messages[0]
    assert (message.date, message.edit_date, decoded.state.date) == (late, 2**40, 2**40)
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(decoded), type=Difference) == decoded


@pytest.mark.parametrize("case", list(REFUSED_RESULTS))
def test_invalid_results_are_refused_naming_the_field_from_maps_and_from_bytes(case):
    result, path = REFUSED_RESULTS[case]
    method = METHODS["getDifference"]
    with pytest.raises(InvalidParamsError) as from_map:
        method.decode_result(result)
    frame = decode_server_frame(_frame_body({"id": 3, "result": result}))
    assert isinstance(frame, ResultFrame)
    with pytest.raises(InvalidParamsError) as from_bytes:
        method.decode_result(frame.result)
    for error in (from_map.value, from_bytes.value):
        assert error.message.startswith(f"{path}: "), error.message


# --------------------------------------------------------------------------- server frames


def test_a_result_frame_is_decoded_for_its_method():
    body = _frame_body(encode_result(3, DIFFERENCE))
    frame = decode_server_frame(body)
    assert isinstance(frame, ResultFrame)
    assert frame.id == 3
    assert isinstance(frame.result, msgspec.Raw)
    assert METHODS["getDifference"].decode_result(frame.result) == DIFFERENCE


def test_a_push_is_decoded_to_records():
    push = Updates((UpdateUserStatus(Presence(USER, PresenceStatus.OFFLINE, 3)),))
    frame = decode_server_frame(_frame_body(encode_push(push)))
    assert frame == PushFrame(push)


def test_an_error_frame_and_a_frame_with_other_keys_take_the_general_way():
    error = decode_server_frame(_frame_body({"id": 4, "error": {"code": "FLOOD", "message": "m"}}))
    assert isinstance(error, ErrorFrame)
    assert (error.id, error.error.code, error.error.message) == (4, "FLOOD", "m")
    body = _frame_body({"id": 3, "result": DIFFERENCE.to_wire(), "trace": "new key"})
    frame = decode_server_frame(body)
    assert isinstance(frame, ResultFrame)
    assert METHODS["getDifference"].decode_result(frame.result) == DIFFERENCE


def test_a_frame_over_the_limit_is_refused():
    body = _frame_body(encode_result(3, DIFFERENCE))
    with pytest.raises(FrameTooLargeError):
        decode_server_frame(body, max_size=len(body) - 1)


def _nested(depth):
    value: object = None
    for _ in range(depth):
        value = {"k": value}
    return value


_EXT = msgpack.ExtType(5, b"x")
#: Values the frame checks refuse anywhere in a frame, even under a key no record knows.
REFUSED_VALUES = {
    "extension type": _EXT,
    "timestamp": msgpack.Timestamp(1, 0),
    "int key": {1: "a"},
    "bytes key in a list": [{b"k": 1}],
    "too deep for its place": _nested(MAX_DEPTH),
}


@pytest.mark.parametrize("name", list(REFUSED_VALUES))
@pytest.mark.parametrize("where", ["result", "push", "message"])
def test_malformed_values_under_unknown_keys_are_refused(name, where):
    value = REFUSED_VALUES[name]
    if where == "push":
        body = _packed({"push": "updates", "updates": {**Updates(()).to_wire(), "extra": value}})
        with pytest.raises(MalformedFrameError):
            decode_server_frame(body)
    else:
        result = DIFFERENCE.to_wire()
        if where == "result":
            result["extra"] = value
        else:
            result["new_messages"] = [{**MESSAGE_MAP, "extra": value}]
        body = _packed({"id": 3, "result": result})
        frame = decode_server_frame(body)
        assert isinstance(frame, ResultFrame)
        with pytest.raises(MalformedFrameError):
            METHODS["getDifference"].decode_result(frame.result)
    with pytest.raises(MalformedFrameError):
        decode_body(body)


def test_an_extension_type_in_a_known_field_is_malformed_not_invalid():
    result = _difference_map(state={**STATE.to_wire(), "pts": msgpack.ExtType(1, b"x")})
    frame = decode_server_frame(_packed({"id": 3, "result": result}))
    assert isinstance(frame, ResultFrame)
    with pytest.raises(MalformedFrameError):
        METHODS["getDifference"].decode_result(frame.result)


@pytest.mark.parametrize(
    "body",
    [
        _packed([1, 2]),
        _packed({"id": 3, "result": {}}) + b"\x00",
        _packed({1: 2, "id": 3, "result": {}}),
        _packed({"push": "other", "updates": {}}),
        _packed({"id": -1, "result": {}}),
        _packed({"id": 3}),
        b"\x81\xa2id" + b"\x91" * 5000 + b"\xc0",
        _packed({"push": "updates", "updates": {"_": "updatesTooLong"}, "result": _EXT}),
        _packed({"id": 3, "result": {"_": "differenceTooLong", "pts": 1}, "updates": _EXT}),
    ],
    ids=[
        "list",
        "trailing byte",
        "int key",
        "unknown push",
        "bad id",
        "no result",
        "deep",
        "push with a bad result",
        "result with bad updates",
    ],
)
def test_a_broken_envelope_is_malformed(body):
    with pytest.raises(MalformedFrameError):
        decode_server_frame(body)


# --------------------------------------------------------------------------- both ways agree

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.text(max_size=5),
    st.binary(max_size=3),
    st.just(msgpack.ExtType(1, b"x")),
)
_ODD_VALUES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=2)
        | st.dictionaries(st.text(max_size=2) | st.integers(0, 2), children, max_size=2)
    ),
    max_leaves=6,
)
_FIELDS = ["new_messages", "other_updates", "peers", "state", "presences", "_", "x"]


@st.composite
def result_frames(draw):
    """A getDifference result frame with a few of its values replaced by odd ones."""
    result = DIFFERENCE.to_wire()
    message = dict(MESSAGE_MAP)
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from([result, message]))
        key = draw(st.sampled_from([*_FIELDS, *MESSAGE_MAP]))
        target[key] = draw(_ODD_VALUES | st.integers(0, 3).map(_nested))
    result["new_messages"] = [message]
    frame = {"id": 3, "result": result}
    if draw(st.booleans()):
        frame[draw(st.sampled_from(["x", "id", "push", "updates"]))] = draw(_ODD_VALUES)
    return _packed(frame)


def _outcome(decode):
    try:
        return decode()
    except ProtocolError as error:
        return type(error)


@given(result_frames())
def test_decoding_from_bytes_agrees_with_decoding_from_checked_maps(body):
    method = METHODS["getDifference"]

    def from_bytes():
        frame = decode_server_frame(body)
        return frame if not isinstance(frame, ResultFrame) else method.decode_result(frame.result)

    def from_maps():
        frame = parse_server_frame(decode_body(body))
        return frame if not isinstance(frame, ResultFrame) else method.decode_result(frame.result)

    assert _outcome(from_bytes) == _outcome(from_maps)
