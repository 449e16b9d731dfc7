"""postbox-seed on a real Spark standalone cluster: a master and two workers on loopback,
each its own JVM, the project's code shipped to the executors as a zip. The files it
writes are the local path's, byte for byte."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_tools.cli import main as seed_main

pytestmark = pytest.mark.spark

#: How long the cluster may take to come up, and a seed on it to finish.
START_DEADLINE = 90.0
RUN_DEADLINE = 240.0
WORKERS = 2
ARGS = [
    "--users", "12", "--groups", "4", "--channels", "3", "--messages", "3000", "--days", "10",
    "--offline-days", "2", "--seed", "5", "--partitions", "2", "--quiet",
    "--client-active", "4", "--client-window", "60",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


class Cluster:
    """A standalone master and its workers, as child process groups of this test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.ui_port = free_port()
        self.processes: list[subprocess.Popen[bytes]] = []
        self._registered = 0
        self._ready = threading.Event()
        self._follower: threading.Thread | None = None
        # Without PYTHONPATH: the executors find the project's code in the zip it ships.
        self.env = {
            **{name: value for name, value in os.environ.items() if name != "PYTHONPATH"},
            "SPARK_HOME": str(spark_class().parent.parent),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(root / "logs"),
            "SPARK_WORKER_DIR": str(root / "work"),
            "PYSPARK_PYTHON": sys.executable,
        }

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def start(self, name: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - the child writes it
        self.processes.append(
            subprocess.Popen(
                [str(spark_class()), *args],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        log.close()

    def start_master(self, *args: str) -> None:
        """The master, its output read line by line: each worker it registers counts."""
        master = subprocess.Popen(
            [str(spark_class()), "org.apache.spark.deploy.master.Master", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(master)
        self._follower = threading.Thread(target=self._follow_master, args=(master,))
        self._follower.start()

    def _follow_master(self, master: subprocess.Popen[bytes]) -> None:
        assert master.stdout is not None
        with master.stdout as output, open(self.root / "master.log", "wb") as log:
            for line in output:
                log.write(line)
                log.flush()
                if b"Master: Registering worker" in line:
                    self._registered += 1
                    if self._registered == WORKERS:
                        self._ready.set()
        self._ready.set()  # the master exited: wait_ready says so

    def wait_ready(self) -> None:
        """Until the master has registered every worker (an event, not a poll)."""
        if not self._ready.wait(START_DEADLINE):
            raise AssertionError(f"workers not registered in {START_DEADLINE:.0f} s: {self.root}")
        if self._registered < WORKERS:
            raise AssertionError(f"the Spark master exited: see the logs in {self.root}")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if self._follower is not None:
            self._follower.join()  # it reads the master's output to its end, then closes it


@pytest.fixture
def cluster(tmp_path) -> Iterator[Cluster]:
    root = tmp_path / "cluster"
    (root / "work").mkdir(parents=True)
    running = Cluster(root)
    try:
        running.start_master(
            "--host", "127.0.0.1", "--port", str(running.port),
            "--webui-port", str(running.ui_port),
        )  # fmt: skip
        for number in range(WORKERS):
            running.start(
                f"worker-{number}", "org.apache.spark.deploy.worker.Worker", running.url,
                "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
                "--webui-port", str(free_port()), "--work-dir", str(root / "work"),
            )  # fmt: skip
        yield running
    finally:
        running.stop()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def outputs(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): sha256(path)
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_a_seed_on_a_standalone_cluster_writes_the_local_paths_files(cluster, tmp_path):
    # The local path first, while the cluster's JVMs start.
    local = tmp_path / "local"
    local_argv = [
        *ARGS, "--local", "--out", str(local / "dataset"), "--server-db",
        str(local / "server.db"), "--client-db", str(local / "client.db"),
    ]  # fmt: skip
    assert seed_main(local_argv) == 0
    cluster.wait_ready()
    on_cluster = tmp_path / "on-cluster"
    command = "import sys; from spark_tools.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [
        *ARGS, "--out", str(on_cluster / "dataset"), "--server-db", str(on_cluster / "server.db"),
        "--client-db", str(on_cluster / "client.db"),
    ]  # fmt: skip
    # Its own process: this one may already hold a local Spark session.
    env = {**cluster.env, "PYTHONPATH": os.pathsep.join(sys.path)}
    finished = subprocess.run(
        [sys.executable, "-c", command, "--master", cluster.url, *argv],
        env=env,
        capture_output=True,
        timeout=RUN_DEADLINE,
    )
    assert finished.returncode == 0, finished.stderr.decode(errors="replace")[-3000:]
    assert outputs(on_cluster) == outputs(local)
    assert len(outputs(local)) > 10
