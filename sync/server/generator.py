"""The size limits of the server's generated account, still imported from here by
``client.cli``; the generator itself is ``dataset.generator``."""

from dataset import MAX_DAYS, MAX_MESSAGES, MAX_PEERS

__all__ = ["MAX_DAYS", "MAX_MESSAGES", "MAX_PEERS"]
