"""PySpark dataset generation: ``postbox-seed`` writes a dataset directory for the mock
server and, optionally, a client Postbox file seeded as of a past sync.

The rows come from the plain functions of the ``dataset`` package; this package
runs them on Spark (``spark_path``) or in this process (``local_path``) and writes the
files (``dataset_job``, ``client_db``).
"""

from spark_tools.client_db import ClientSpec, write_client_db
from spark_tools.dataset_job import SeedResult, local_path, spark_path
from spark_tools.errors import JavaMissingError, OutputError, SeedError
from spark_tools.session import find_java, spark_session

__all__ = [
    "ClientSpec",
    "JavaMissingError",
    "OutputError",
    "SeedError",
    "SeedResult",
    "find_java",
    "local_path",
    "spark_path",
    "spark_session",
    "write_client_db",
]
