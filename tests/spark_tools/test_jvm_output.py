"""What the JVM behind ``postbox-seed`` may print: its own warnings and Spark's notices
stay off the terminal; errors and the Python workers' output pass."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from spark_tools.session import forward_jvm_stderr

ROOT = Path(__file__).resolve().parents[2]


def test_the_jvms_own_warnings_are_dropped_and_the_rest_passes(capsys) -> None:
    jvm = io.BytesIO(
        b"WARNING: Using incubator modules: jdk.incubator.vector\n"
        b"WARNING: An illegal reflective access operation has occurred\n"
        b"spark: ERROR Executor: Exception in task 0.0\n"
        b"WARNING:root:a worker's own warning\n"
        b"Traceback (most recent call last):\n"
        b"\xff not UTF-8\n"
    )
    forward_jvm_stderr(jvm)
    assert capsys.readouterr().err.splitlines() == [
        "spark: ERROR Executor: Exception in task 0.0",
        "WARNING:root:a worker's own warning",
        "Traceback (most recent call last):",
        "\ufffd not UTF-8",
    ]


def _properties(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs if not key.startswith("#")}


def test_the_gateway_logger_keeps_the_roots_level() -> None:
    """PySpark's gateway prints "Setting default log level" when its logger's level
    differs from the root's (or is not set)."""
    config = _properties(ROOT / "spark_tools" / "log4j2.properties")
    assert config["logger.gateway.name"] == "org.apache.spark.api.python.PythonGatewayServer"
    assert config["logger.gateway.level"] == config["rootLogger.level"]


@pytest.mark.spark
def test_the_spark_path_prints_only_its_own_line(tmp_path) -> None:
    """A fresh process, so the JVM starts here and all it prints is seen."""
    argv = ["--out", str(tmp_path / "ds"), "--users", "2", "--groups", "0", "--channels", "0"]
    argv += ["--messages", "20", "--partitions", "1", "--master", "local[1]", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "spark_tools.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("postbox-seed: wrote "), done.stderr
    assert done.stdout == ""
