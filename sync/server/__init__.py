"""The mock server: one account's truth in SQLite, served over the wire protocol.

``store`` holds the data and the update logs, ``service`` answers requests, ``traffic``
makes events, ``faults`` spoils pushes on purpose, ``server`` puts it on asyncio TCP
(``MockServer``, or ``EmbeddedServer`` on a thread of its own), ``cli`` is
``postbox-server``; ``importer`` loads a dataset made and read by the ``dataset``
package.
"""

from sync.server.config import FaultConfig, ServerConfig
from sync.server.server import EmbeddedServer, MockServer

__all__ = ["EmbeddedServer", "FaultConfig", "MockServer", "ServerConfig"]
