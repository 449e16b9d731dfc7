"""Dates past 2038-01-19T03:14:07Z, the end of signed 32-bit Unix time, in the Postbox."""

from __future__ import annotations

from postbox import MessageId, MessageIndex, PeerId, PeerNotificationSettings
from postbox.keys import decode_message_index_key, message_index_key

PAST_2038 = 2**31


def test_a_message_key_past_2038_sorts_after_every_earlier_one() -> None:
    peer = PeerId(5)
    before = MessageIndex(MessageId(peer, 0, 9), PAST_2038 - 1)
    after = MessageIndex(MessageId(peer, 0, 1), PAST_2038)
    last = MessageIndex(MessageId(peer, 0, 1), 2**32 - 1)  # 2106-02-07T06:28:15Z
    keys = [message_index_key(index) for index in (before, after, last)]
    assert keys == sorted(keys)
    assert [decode_message_index_key(key) for key in keys] == [before, after, last]


def test_a_chat_muted_for_ever_stays_muted_past_2038() -> None:
    forever = PeerNotificationSettings(PeerNotificationSettings.MUTED_FOREVER)
    assert forever.is_muted(PAST_2038 + 3600)
    assert not PeerNotificationSettings(PAST_2038 + 60).is_muted(PAST_2038 + 3600)
