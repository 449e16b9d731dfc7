"""Starting Spark: a clear error without Java, workers on the driver's interpreter, and
on a cluster the project's code shipped to the executors."""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import IO, Any

from spark_tools.errors import JavaMissingError, SeedError

__all__ = [
    "code_archive",
    "find_java",
    "forward_jvm_stderr",
    "is_jvm_warning",
    "spark_session",
]

#: The packages Spark tasks import: shipped to a cluster's executors.
SHIPPED_PACKAGES = ("dataset", "postbox", "spark_tools", "sync")


def find_java() -> Path:
    """The ``java`` Spark will start; ``JavaMissingError`` if there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
        raise JavaMissingError(
            f"JAVA_HOME is {home}, but {candidate} is not an executable: "
            "point it at a Java 17+ runtime"
        )
    found = shutil.which("java")
    if found is None:
        raise JavaMissingError(
            "Spark needs a Java runtime (17 or newer) and no 'java' is on PATH: "
            "install one or set JAVA_HOME"
        )
    return Path(found)


def spark_session(master: str, app_name: str = "postbox-seed") -> Any:
    """A SparkSession on ``master``; its Python workers run this interpreter unless
    ``PYSPARK_PYTHON`` says otherwise (they would start the system Python)."""
    find_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError as error:
        raise SeedError(
            f"PySpark is not installed ({error}): install the project with its 'spark' extra"
        ) from None
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    log_config = Path(__file__).with_name("log4j2.properties")
    java_options = f"-Dlog4j2.configurationFile=file:{log_config}"
    conf = SparkConf().setMaster(master).setAppName(app_name)
    for key, value in (
        ("spark.driver.extraJavaOptions", java_options),
        ("spark.executor.extraJavaOptions", java_options),
        ("spark.ui.enabled", "false"),
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.sql.shuffle.partitions", "8"),
        ("spark.driver.memory", "2g"),
        ("spark.python.worker.reuse", "true"),
    ):
        conf.set(key, value)
    try:
        if SparkContext._gateway is None:  # no JVM yet in this process: start it here
            # The JVM's own warnings (an incubator module Spark adds, say) bypass log4j:
            # its stderr comes through a filter that keeps everything else.
            popen = {"stderr": subprocess.PIPE}  # PySpark's documented hook for this
            gateway = launch_gateway(conf, popen_kwargs=popen)  # type: ignore[no-untyped-call]
            if gateway.proc is not None:  # None: a JVM started elsewhere (PYSPARK_GATEWAY_PORT)
                threading.Thread(
                    target=forward_jvm_stderr, args=(gateway.proc.stderr,), daemon=True
                ).start()
            SparkContext(conf=conf, gateway=gateway)
        session = SparkSession.builder.config(conf=conf).getOrCreate()
    except Exception as error:  # noqa: BLE001 - py4j and Spark raise many kinds
        raise SeedError(f"Spark did not start on master {master!r}: {error}") from None
    session.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        # Executors elsewhere have only their Python and its third-party packages: the
        # code of this project goes with the job, as a zip on their sys.path.
        directory = Path(tempfile.mkdtemp(prefix="postbox-seed-"))
        atexit.register(shutil.rmtree, directory, True)
        session.sparkContext.addPyFile(str(code_archive(directory / "postbox_chat.zip")))
    return session


def is_jvm_warning(line: str) -> bool:
    """A warning the JVM itself prints, outside any logging (``WARNING: Using incubator
    modules``, illegal reflective access, ``sun.misc.Unsafe``): noise for a user."""
    return line.startswith("WARNING: ")


def forward_jvm_stderr(stream: IO[bytes]) -> None:
    """Copy the JVM's stderr to ours, line by line, without the JVM's own warnings;
    Spark's errors (log4j) and the Python workers' output pass. Returns at EOF."""
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace")
        if not is_jvm_warning(line):
            sys.stderr.write(line)
            sys.stderr.flush()


def code_archive(path: Path) -> Path:
    """Write the Python sources of ``SHIPPED_PACKAGES``, as this process imports them,
    into a zip at ``path`` (for ``addPyFile``)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in SHIPPED_PACKAGES:
            root = Path(importlib.import_module(name).__file__ or "").parent
            for source in sorted(root.rglob("*")):
                if source.suffix in (".py", ".properties", ".typed") and source.is_file():
                    archive.write(source, f"{name}/{source.relative_to(root).as_posix()}")
    return path
