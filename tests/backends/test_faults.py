"""Faults injected into fits at scale: a Dask worker killed or restarted mid-fit, a cluster that
disappears, parquet files truncated, corrupted, of differing schemas or replaced while they are
read, a cache file lost between iterations. Each fault is survived (the fit equals the in-memory
model to 1e-8) or raises a clear error naming what was lost; none gives a silent partial result.
The list and counts are in doc/reliability.rst.
"""

import os
import signal
import time

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from skcrowd import GLAD, DawidSkene  # noqa: E402
from skcrowd.backends import OutOfCoreVotes  # noqa: E402
from skcrowd.backends import _outofcore  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore", category=ConvergenceWarning)  # tol=0

FITTED = ("class_priors_", "confusion_matrices_", "abilities_", "lower_bounds_", "n_iter_")
EM_ATTRIBUTES = ("converged_", "lower_bound_", "lower_bounds_", "n_iter_", "class_priors_")


def crowd(n_tasks=300, n_workers=30, n_classes=3, seed=0):
    """Long-format votes of workers of accuracy 0.4-0.95 (shuffled), and the votes matrix."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(n_classes, size=n_tasks)
    accuracy = rng.uniform(0.4, 0.95, size=n_workers)
    rows = []
    for t in range(n_tasks):
        for w in rng.choice(n_workers, size=rng.integers(1, 6), replace=False):
            right = rng.random() < accuracy[w]
            rows.append((t, int(w), int(truth[t] if right else rng.integers(n_classes))))
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    frame = frame.sample(frac=1.0, random_state=seed)
    matrix = np.full((n_tasks, n_workers), -1)
    matrix[frame.task, frame.worker] = frame.label
    return frame.reset_index(drop=True), matrix


def assert_same_model(expected, got):
    for name in FITTED:
        if hasattr(expected, name):
            np.testing.assert_allclose(getattr(got, name), getattr(expected, name), rtol=0,
                                       atol=1e-8, err_msg=name)


def fault_at_call(monkeypatch, cls, n, fault):
    """Run ``fault()`` just before the ``n``-th ``cls.map_reduce`` call (1: the first E-step's
    initial statistics; n > 2: between EM iterations)."""
    original, calls = cls.map_reduce, []

    def map_reduce(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            fault()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "map_reduce", map_reduce)
    return calls


# -- Dask ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def process_client():
    """A LocalCluster of 2 worker processes (with nannies, which restart a killed worker)."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster, set_as_default=False) as client:
            yield client


def kill_a_worker(client):
    """SIGKILL the process of one Dask worker, as a crash or a preempted machine would."""
    address, pid = sorted(client.run(os.getpid).items())[0]
    os.kill(pid, signal.SIGKILL)


def restart_every_worker(client):
    """Restart every worker: all their data (blocks, states, scattered tables) is lost."""
    client.restart_workers(list(client.scheduler_info()["workers"]))


def recoveries(monkeypatch):
    from skcrowd.backends._dask import DaskVotes

    original, calls = DaskVotes._recover, []

    def recover(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(DaskVotes, "_recover", recover)
    return calls


@pytest.mark.dask
@pytest.mark.parametrize("estimator, fault", [  # about 4 s each on the module's cluster
    (GLAD(max_iter=12, tol=0.0), kill_a_worker),  # per-task state lost: from the checkpoint
    (DawidSkene(max_iter=12, tol=0.0), kill_a_worker),
    (GLAD(max_iter=12, tol=0.0), restart_every_worker),
], ids=["GLAD-kill", "DawidSkene-kill", "GLAD-restart-all"])
def test_a_fit_survives_a_lost_dask_worker(process_client, monkeypatch, capsys, estimator,
                                           fault):
    dd = pytest.importorskip("dask.dataframe")
    from skcrowd.backends import DaskVotes

    frame, matrix = crowd()
    capsys.readouterr()
    memory = estimator.__class__(**{**estimator.get_params(), "verbose": 2}).fit(matrix)
    # one pass over the votes per iteration (12) and the final E-step, plus one per provisional
    # iteration that chooses GLAD's "auto" prior: none on crowd(0), 42 on another draw
    choosing = capsys.readouterr().out.count("Choosing the prior")
    votes = DaskVotes(dd.from_pandas(frame, npartitions=4), client=process_client)
    recovered = recoveries(monkeypatch)
    calls = fault_at_call(monkeypatch, DaskVotes, 5, lambda: fault(process_client))
    fitted = estimator.__class__(**estimator.get_params()).fit(votes)
    # the fault hit the fit, which recovered
    assert len(calls) == 13 + choosing and len(recovered) >= 1
    assert_same_model(memory, fitted)
    proba = process_client.compute(fitted.predict_proba(votes)).result().sort_index()
    np.testing.assert_allclose(proba.to_numpy(), memory.predict_proba(matrix), rtol=0, atol=1e-8)
    votes.close()


@pytest.fixture
def doomed_client():
    """An in-process LocalCluster of its own, that a test may close."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.dataframe")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=":0")
    client = distributed.Client(cluster, set_as_default=False)
    yield client, cluster
    client.close()
    cluster.close()


@pytest.mark.dask
def test_a_cluster_that_disappears_mid_fit_is_an_error_that_says_so(doomed_client, monkeypatch,
                                                                    dask_client):
    dd = pytest.importorskip("dask.dataframe")
    from skcrowd.backends import DaskClusterError, DaskVotes

    client, cluster = doomed_client
    frame, matrix = crowd()
    votes = DaskVotes(dd.from_pandas(frame, npartitions=2), client=client)
    fault_at_call(monkeypatch, DaskVotes, 4, cluster.close)
    model = DawidSkene(max_iter=10, tol=0.0)
    started = time.perf_counter()
    with pytest.raises(DaskClusterError, match="Dask cluster that holds these votes is gone"):
        model.fit(votes)
    assert time.perf_counter() - started < 60  # no endless retry
    assert not any(hasattr(model, name) for name in EM_ATTRIBUTES)
    with pytest.raises(DaskClusterError, match="is gone"):  # and so does any later use
        votes.map_reduce(lambda block, tables, state: ((), (1,), state))
    # a refit from scratch on a running cluster works and equals the in-memory model
    monkeypatch.undo()
    refit = model.fit(dd.from_pandas(frame, npartitions=2))
    assert_same_model(DawidSkene(max_iter=10, tol=0.0).fit(matrix), refit)


@pytest.mark.dask
def test_a_fit_interrupted_by_a_lost_cluster_leaves_the_estimator_as_it_was(
        doomed_client, monkeypatch):
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.exceptions import NotFittedError

    from skcrowd.backends import DaskClusterError, DaskVotes

    client, cluster = doomed_client
    frame, _ = crowd()
    votes = DaskVotes(dd.from_pandas(frame, npartitions=2), client=client)
    fault_at_call(monkeypatch, DaskVotes, 4, cluster.close)
    model = DawidSkene(max_iter=10, tol=0.0)
    with pytest.raises(DaskClusterError):
        model.fit(votes)
    assert [name for name in vars(model) if name.endswith("_")] == []
    with pytest.raises(NotFittedError):
        model.predict(frame)


# -- out of core ---------------------------------------------------------------------------------


def write(path, frame, **options):
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, **options)
    return path


@pytest.fixture
def votes_file(tmp_path):
    frame, matrix = crowd()
    return write(tmp_path / "votes.parquet", frame, row_group_size=400), frame, matrix


def fit_error(source, match):
    model = DawidSkene(max_iter=5)
    with pytest.raises(ValueError, match=match) as err:
        model.fit(source)
    assert not any(hasattr(model, name) for name in ("classes_", *EM_ATTRIBUTES))
    return str(err.value)


def cache_folders(tmp_dir):
    return sorted(p.name for p in tmp_dir.iterdir() if p.name.startswith("skcrowd-votes-"))


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_truncated_parquet_file_is_named(votes_file, tmp_path, keep):
    path, frame, _ = votes_file
    raw = path.read_bytes()
    path.write_bytes(raw[:int(len(raw) * keep)])
    fit_error(path, f"X: cannot read the parquet votes at '{path}'.*magic bytes")
    folder = tmp_path / "folder"
    folder.mkdir()
    write(folder / "a.parquet", frame[:200])
    (folder / "b.parquet").write_bytes(raw[:int(len(raw) * keep)])
    fit_error(folder, f"X: cannot read the parquet file '{folder / 'b.parquet'}'")


def test_a_corrupted_data_page_is_an_error_naming_the_file(tmp_path):
    frame, _ = crowd()
    path = write(tmp_path / "votes.parquet", frame, write_page_checksum=True,
                 compression="NONE", use_dictionary=False)
    column = pq.ParquetFile(path).metadata.row_group(0).column(2)  # labels, plain int64
    raw = bytearray(path.read_bytes())
    raw[column.data_page_offset + column.total_compressed_size - 8] ^= 0x01  # a label's bit
    path.write_bytes(bytes(raw))
    fit_error(path, f"X: cannot read the parquet file '{path}' .corrupted or truncated.*CRC")


def test_a_corrupted_page_header_is_an_error_naming_the_file(tmp_path):
    frame, _ = crowd()
    path = write(tmp_path / "votes.parquet", frame)
    column = pq.ParquetFile(path).metadata.row_group(0).column(0)
    raw = bytearray(path.read_bytes())
    for i in range(column.data_page_offset, column.data_page_offset + 8):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))
    fit_error(path, f"X: cannot read the parquet file '{path}' .corrupted or truncated")


# astype(str) gives arrow's large_string under pandas 3 (its str dtype), string under pandas 2
@pytest.mark.parametrize("change, match", [
    (lambda f: f.assign(label=f.label.astype(str)), "column 'label' is (large_)?string in file "),
    (lambda f: f.assign(worker=f.worker.astype(str)),
     "column 'worker' is (large_)?string in file "),
    (lambda f: f.assign(label=f.label.astype(float)), "column 'label' is double in file "),
    (lambda f: f.drop(columns="task"), "has no column 'task'"),
])
def test_a_folder_whose_files_differ_in_schema_names_the_file(tmp_path, change, match):
    frame, _ = crowd()
    folder = tmp_path / "folder"
    folder.mkdir()
    write(folder / "part-0.parquet", frame[:400])
    write(folder / "part-1.parquet", change(frame[400:]))
    message = fit_error(folder, match)
    assert str(folder / "part-1.parquet") in message


def test_a_file_replaced_while_it_is_encoded_is_an_error(votes_file, tmp_path, monkeypatch):
    """The votes are read twice (a scan, then the encoding): a file replaced in between (or
    while one pass reads it) would mix two versions of the votes."""
    path, frame, _ = votes_file

    class ScanThenReplace(_outofcore._Scan):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            write(path, frame[: len(frame) // 2])  # another version of the file

    monkeypatch.setattr(_outofcore, "_Scan", ScanThenReplace)
    before = cache_folders(tmp_path)
    with pytest.raises(ValueError, match=f"file '{path}' changed while the votes were read"):
        OutOfCoreVotes(path, tmp_dir=tmp_path)
    assert cache_folders(tmp_path) == before  # the half-built cache is deleted


def test_a_file_replaced_between_iterations_does_not_change_the_fit(votes_file, monkeypatch):
    """Iterations read the encoded cache, a snapshot of the votes taken when the fit began."""
    path, frame, matrix = votes_file
    fault_at_call(monkeypatch, OutOfCoreVotes, 4, lambda: write(path, frame[: len(frame) // 2]))
    fitted = DawidSkene(max_iter=10, tol=0.0).fit(path)
    assert_same_model(DawidSkene(max_iter=10, tol=0.0).fit(matrix), fitted)


def test_a_cache_file_lost_between_iterations_is_named(votes_file, tmp_path, monkeypatch):
    path, _, _ = votes_file
    with OutOfCoreVotes(path, block_votes=300, tmp_dir=tmp_path) as votes:
        block = votes._dir / "block-000001.npy"
        fault_at_call(monkeypatch, OutOfCoreVotes, 4,
                      lambda: block.write_bytes(block.read_bytes()[:100]))
        with pytest.raises(ValueError, match=f"the cache file '{block}' of these out-of-core "
                                             "votes is missing or damaged"):
            DawidSkene(max_iter=10, tol=0.0).fit(votes)
