"""The wire protocol shared by the mock server and the client: frames, records, methods.

No I/O here: ``framing`` cuts bytes into frames, ``schema``, ``types`` and ``methods``
turn msgpack bytes or decoded maps into validated records (msgspec Structs), ``errors``
names what can go wrong.
"""

from sync.protocol import errors, framing, methods, schema, stickers, types
from sync.protocol.errors import *  # noqa: F403
from sync.protocol.framing import *  # noqa: F403
from sync.protocol.methods import *  # noqa: F403
from sync.protocol.schema import *  # noqa: F403
from sync.protocol.stickers import *  # noqa: F403
from sync.protocol.types import *  # noqa: F403

__all__ = [
    *errors.__all__,
    *framing.__all__,
    *methods.__all__,
    *schema.__all__,
    *stickers.__all__,
    *types.__all__,
]
