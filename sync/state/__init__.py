"""The update rules, without I/O: what to apply, what to wait for, when to ask.

As Telethon's MessageBox: nothing here reads a clock, a socket or a database. Pushes
are sorted by the counter that orders them (``updates``); a ``Sequencer`` per counter
says which updates apply now, which are old and which wait for a missing one; and
``GapDeadlines`` takes the time as an argument and says when a wait has lasted long
enough that the difference must be asked for. The engine's state manager is the
driver: it feeds them what arrives with the loop's time, arms one timer at the next
deadline, and does the requests and the Postbox transactions. ``answers`` says which
answers break the protocol's rules and when to ask for a peer an answer names.
``FloodWaits`` says which kinds of request wait after the server's ``FLOOD_WAIT``, and
until when; ``ChannelPollTimeouts`` when a channel may be polled again after a
difference's ``timeout``.
``ServerClock`` estimates the server's time from the dates it sends, for the dates of
outgoing messages.
"""

from sync.state.answers import (
    ACCOUNT_CHATS,
    PEERS_PER_REQUEST,
    LookupPlan,
    PeerLookups,
    ServerLiedError,
    check_dialogs,
    check_message,
    check_peers,
    check_update,
    referenced_peers,
)
from sync.state.channel_polls import MAX_CHANNEL_TIMEOUT, ChannelPollTimeouts
from sync.state.clock import WAKE_THRESHOLD, ClockReading, ServerClock, server_date_of
from sync.state.flood import MIN_FLOOD_WAIT, FloodWaits, flood_kind
from sync.state.gaps import ACCOUNT_PTS, POSSIBLE_GAP_TIMEOUT, QTS, SEQ, GapDeadlines, GapKey
from sync.state.updates import (
    Grouped,
    Sequenced,
    Sequencer,
    channel_of,
    group_push,
    group_updates,
    pts_of,
    qts_of,
)

__all__ = [
    "ACCOUNT_CHATS",
    "ACCOUNT_PTS",
    "PEERS_PER_REQUEST",
    "MAX_CHANNEL_TIMEOUT",
    "MIN_FLOOD_WAIT",
    "WAKE_THRESHOLD",
    "ClockReading",
    "POSSIBLE_GAP_TIMEOUT",
    "QTS",
    "SEQ",
    "ChannelPollTimeouts",
    "FloodWaits",
    "GapDeadlines",
    "LookupPlan",
    "PeerLookups",
    "ServerLiedError",
    "check_dialogs",
    "check_message",
    "check_peers",
    "check_update",
    "referenced_peers",
    "GapKey",
    "Grouped",
    "Sequenced",
    "Sequencer",
    "ServerClock",
    "channel_of",
    "flood_kind",
    "group_push",
    "group_updates",
    "pts_of",
    "qts_of",
    "server_date_of",
]
