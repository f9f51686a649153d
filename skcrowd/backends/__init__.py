"""Backends for votes that do not fit in memory or live on a cluster.

* :class:`OutOfCoreVotes`: long-format parquet votes streamed from disk in task-sorted blocks.
* :class:`DaskVotes`: long-format votes in a ``dask.dataframe``, partitioned by task on a
  Dask cluster (the user's ``distributed.Client``, or an embedded ``LocalCluster``).
"""

from ._dask import DaskVotes, close_embedded_cluster, get_client
from ._outofcore import OutOfCoreVotes

__all__ = ["DaskVotes", "OutOfCoreVotes", "close_embedded_cluster", "get_client"]
