"""Kill -9 the sync process at random moments; each restart converges and every queued
outgoing message reaches the server exactly once."""

from __future__ import annotations

import asyncio
import functools
import json
import random
import subprocess
import sys
import time

import pytest

from postbox import PeerId, Postbox
from sync.engine import enqueue_send
from sync.protocol import Message
from sync.server.config import ServerConfig
from sync.server.schema import unpack
from sync.server.server import EmbeddedServer
from tests.sync.engine_helpers import TOKEN, server_report


def sync_process(port: int, db, opened: list[int]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "client.cli", "sync", "--server", f"127.0.0.1:{port}"]
    command += ["--token", TOKEN, "--db", str(db), "--until-idle", "--quiet", "--timeout", "60"]
    command += ["--open", *map(str, opened)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def queue_sends(db, peers: list[int], texts: list[str]) -> None:
    postbox = Postbox(db)
    try:
        for peer, text in zip(peers, texts, strict=True):
            postbox.run(
                functools.partial(
                    enqueue_send, peer_id=PeerId(peer), text=text, timestamp=int(time.time())
                )
            )
    finally:
        postbox.close()


@pytest.mark.parametrize("seed", range(3))
def test_killed_at_random_moments_it_converges_and_sends_once(seed: int, tmp_path) -> None:
    rng = random.Random(seed)
    db = tmp_path / "client.db"
    config = ServerConfig(token=TOKEN, peers=20, messages=800, seed=seed, rate=150.0)
    texts: list[str] = []
    with EmbeddedServer(config) as server:
        chats = server.call(
            lambda s: [p for p, n in s.service.store.chat_sizes() if n and p >> 56 != 2]
        )
        opened = rng.sample(chats, 3)
        for round_ in range(5):
            new = [f"crash test {seed}/{round_}/{i}" for i in range(3)]
            queue_sends(db, [rng.choice(chats) for _ in new], new)
            texts += new
            process = sync_process(server.port, db, opened)
            try:
                process.wait(timeout=rng.uniform(0.2, 1.2))
            except subprocess.TimeoutExpired:
                process.kill()  # SIGKILL: no cleanup, no flush
            process.communicate(timeout=30)
        server.call(lambda s: s._traffic.cancel() if s._traffic else None)
        process = sync_process(server.port, db, opened)
        out, err = process.communicate(timeout=90)
        assert process.returncode == 0, err
        summary = json.loads(out)
        assert summary["pending_outgoing"] == 0

        def sent_counts(s) -> dict[str, int]:
            """Sends the server took, by text: its record of each random_id outlives a
            deletion (traffic deletes old messages, ours among them now and then)."""
            counts = dict.fromkeys(texts, 0)
            for (blob,) in s.service.store.database.execute("SELECT message FROM sent_messages"):
                text = Message.from_wire(unpack(blob)).text
                if text in counts:
                    counts[text] += 1
            return counts

        assert server.call(sent_counts) == dict.fromkeys(texts, 1)
        postbox = Postbox(db)
        try:
            report = asyncio.run(server_report(server, postbox))
        finally:
            postbox.close()
        assert report.ok, "\n".join(map(str, report.divergences[:20]))
