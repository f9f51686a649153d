"""One in-process Dask cluster shared by every Dask test of this folder (started on first use)."""

import pytest


@pytest.fixture(scope="package")
def dask_client():
    """A LocalCluster of 2 workers (threads of this process); the session's default client."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            yield client
