"""Compare a local Postbox with the server's truth: everything a user sees.

Each divergence names its category (``Category``), and ``Report.summary()`` counts
them per category:

* ``messages``: every stored cloud message outside the history holes equals the
  server's, every server message outside the holes is stored, none is stored twice;
* ``read_states``: for every chat the client lists or keeps a read state for, the
  incoming and outgoing read marks and the unread count equal the server's dialog, and
  the chat is not marked unread (the server has no such mark);
* ``chat_list``: every server chat is listed in its group (root or archive), every
  listed chat is on the server (but one listed for failed sends alone, as on
  Telegram), the pinned chats of each group and their order match,
  the other chats keep the server's order, and each listed chat's top message is the
  server's;
* ``peers``: every stored peer has the server's name and username, and every peer a
  screen names (a listed chat, an author of a stored message) is stored;
* ``presences``: every stored presence is the server's;
* ``notification_settings``: every listed chat is muted until the server's date;
* ``drafts``: every listed chat's draft (text and the message it replies to) is the
  server's (a secret chat's draft stays on its device);
* ``contacts``: every peer the client calls a contact is one, and every peer whose
  profile it loaded (so it knows) is one exactly when the server says so;
* ``cursor``: pts, qts and seq, and every loaded channel's pts;
* ``tag_summaries``: every stored shared-media count equals the server's count
  (a filtered ``getHistory``);
* ``pending``: no local message, unsent id or operation-log entry (send, read-state
  sync, edit) is left over, but for failed messages (sends the server refused, the
  client's own and only counted): each has its failure recorded, and the server did
  not store it after all (asked by its random id);
* ``stickers``: the installed sticker sets are the server's, in its order, each with
  its title, short name, hashes and stickers (ids and glyphs) in order;
* ``saved_gifs``: the saved GIFs are the server's, in its order.

What a hole excuses, and nothing more:

* A history hole (a range of message ids the client says it has not loaded) excuses
  a server message inside it that is not stored, and a stored message inside it that
  differs or is gone (it is cache, counted as ``unverified``).
* The chat-list hole (everything older than its index in a group, not loaded yet; the
  hole at the very top also covers the pinned chats) excuses a server chat the client
  does not list when the chat's place in that group is inside the hole. Such a chat is
  not loaded at all, so its history and channel pts are not compared either (a read
  state the client keeps for it still is).
* Nothing else is excused: read marks, unread counts, top messages, names, mutes and
  the order of listed chats are compared whatever holes their history has, and a chat
  the client lists but the server does not is always a divergence.
* Claims the client never makes are not divergences: a user with no stored presence
  (counted apart), the contact status of a peer whose profile was never loaded.
"""

from sync.verify.report import Category, Divergence, Report
from sync.verify.run import verify

__all__ = ["Category", "Divergence", "Report", "verify"]
