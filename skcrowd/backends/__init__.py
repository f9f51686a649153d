"""Votes sources for the EM aggregators: in memory, out of core, on a Dask cluster.

Every source holds the votes as blocks of whole tasks (:class:`VoteBlock`) and runs an EM
iteration as one ``map_reduce``: the per-worker parameter tables go to every block (the rows of
its workers), the same kernel runs on each block, and the statistics are summed.

* :class:`MemoryVotes`: validated in-memory votes, one block.
* :class:`OutOfCoreVotes`: long-format parquet votes streamed from disk in task-sorted blocks.
* :class:`DaskVotes`: long-format votes in a ``dask.dataframe``, partitioned by task on a Dask
  cluster (the user's ``distributed.Client``, or an embedded ``LocalCluster``: :func:`get_client`).
"""

from ._blocks import MemoryVotes, VoteBlock
from ._dask import DaskClusterError, DaskVotes, close_embedded_cluster, get_client
from ._outofcore import OutOfCoreVotes

__all__ = [
    "DaskClusterError",
    "DaskVotes",
    "MemoryVotes",
    "OutOfCoreVotes",
    "VoteBlock",
    "close_embedded_cluster",
    "get_client",
]
