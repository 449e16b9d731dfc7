"""One SparkSession (local[2]) for every Spark test of the run."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from spark_tools.session import spark_session

    # No skip when Java is missing: JavaMissingError fails the tests with its message.
    session = spark_session("local[2]", "postbox-seed-tests")
    yield session
    session.stop()
