"""The errors ``sync`` raises: every failure that leaves the package is a ``SyncError``.

Foreign exceptions (apsw's, msgpack's, the socket's) are translated where they are
caught, with the original as the cause.

    SyncError
    ├── ProtocolError                 a frame or request the protocol refuses; has a code
    │   ├── FramingError              the byte stream is broken      (sync.protocol)
    │   │   └── FrameTooLargeError
    │   ├── MalformedFrameError       not a valid frame              (sync.protocol)
    │   ├── UnknownMethodError                                       (sync.protocol)
    │   ├── InvalidParamsError        a field out of its type/bounds (sync.protocol)
    │   ├── RpcError                  the server answered an error   (sync.protocol)
    │   ├── StoreError                the server's data refuses it   (sync.server.store)
    │   ├── StateWentBackwardsError   an answer older than the cursor (sync.engine)
    │   ├── ServerLiedError           an answer that breaks the protocol's rules,
    │   │                             refused whole                  (sync.state)
    │   └── PayloadError              an outgoing change the protocol cannot carry,
    │       │                         refused at enqueue or before it is sent
    │       └── MessageTooLongError   a text over its limit          (sync.engine)
    ├── ConnectionLostError           the connection dropped; also a ConnectionError
    │                                                                (sync.connection)
    ├── AuthorizationError            the server refused the token   (sync.engine)
    │   ├── SessionTerminatedError    this device's session was ended elsewhere
    │   └── AccountMismatchError      the database belongs to another account
    ├── DatabaseDamagedError          the client's database holds a value that does not
    │                                 decode: sync stops for good    (sync.engine)
    ├── ServerDatabaseError           the server's database file     (here)
    │   ├── NotAServerDatabaseError   another application's file, or not a database
    │   └── NewerServerDatabaseError  written by a newer schema version
    ├── SchedulingError               the server broke its own turn rules; also a
    │                                 RuntimeError                   (sync.server)
    ├── SimulationError               something tried to leave the simulated world
    │   └── StalledError              nothing ready, no timer set   (sync.simulation)
    └── ServerDownError               the simulated server restarts; also a
                                      ConnectionRefusedError        (sync.simulation)
"""

from __future__ import annotations

__all__ = [
    "NewerServerDatabaseError",
    "NotAServerDatabaseError",
    "ServerDatabaseError",
    "SyncError",
]


class SyncError(Exception):
    """The root of every error ``sync`` raises."""


class ServerDatabaseError(SyncError):
    """The server's database file cannot be used: locked, read-only, full, damaged."""


class NotAServerDatabaseError(ServerDatabaseError):
    """The file is another application's SQLite database, or no database at all; it was
    left as it was."""


class NewerServerDatabaseError(ServerDatabaseError):
    """The file is a server database of a newer schema version than this server knows;
    it was left as it was."""
