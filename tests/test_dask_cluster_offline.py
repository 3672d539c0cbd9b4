"""cudareduce.dask on a ``dask.distributed`` cluster of two workers, without
a GPU: which blocks a task reduces, so that no block moves between
workers and only partials do, and that the answer is NumPy's.

A ``LocalCluster`` of two in-process workers (``processes=False``: its
tasks run in this process, with the one call of cudareduce replaced by
NumPy's reduction, as in tests/test_dask_offline.py, whose stand-in this
module takes).  A cluster is a default client while it is open, which
changes how every graph of cudareduce.dask is cut: that is why these
tests are a module of their own.  On the GPU the same graphs run on a
dask-cuda cluster (tests/test_dask_cluster_gpu.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from test_dask_offline import (OPS, data, first_level_tasks, numpy_answer,
                               same)
from test_dask_offline import numpy_reductions  # noqa: F401  (autouse)

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")
distributed = pytest.importorskip("distributed")

ROWS = 4                            # rows of a block of the placed arrays


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=False,
                                  threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        yield cluster


def ours(op, x, **kwargs):
    """cudareduce.dask's `op` of `x`, computed on the cluster."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(cd, op)(x, **kwargs).compute()


def workers(cluster) -> list:
    return sorted(cluster.workers.values(), key=lambda w: w.address)


def placed(cluster, host: np.ndarray) -> da.Array:
    """`host` as a Dask array of blocks of ROWS rows, held by the two
    workers in turn (block i by worker i % 2): each block scattered to its
    worker, its key in the array's graph holding the Future of it."""
    name = "placed-" + str(id(host))
    holders = workers(cluster)
    graph = {(name, i, 0): distributed.default_client().scatter(
                 host[start:start + ROWS],
                 workers=[holders[i % 2].address])
             for i, start in enumerate(range(0, len(host), ROWS))}
    return da.Array(graph, name,
                    chunks=((ROWS,) * len(graph), (host.shape[1],)),
                    dtype=host.dtype)


def moved_keys(cluster) -> set:
    """The keys that each worker has fetched from another so far."""
    return {key for worker in workers(cluster)
            for entry in worker.transfer_incoming_log
            for key in entry["keys"]}


def block_keys(x: da.Array) -> set:
    """The keys of a placed array's blocks: its own, and those of the data
    they hold."""
    return {future.key for future in distributed.futures_of(x)} | {
        key for row in x.__dask_keys__() for key in row}


def test_a_task_reduces_the_blocks_of_one_worker(cluster):
    x = placed(cluster, np.arange(64.0 * 9).reshape(64, 9))
    even, odd = [[(i, 0) for i in range(first, 16, 2)] for first in (0, 1)]
    assert cd._block_groups(x, 32) == [even, odd]
    # split_every cuts each worker's blocks, not the grid's.
    assert cd._block_groups(x, 3) == [even[:3], even[3:6], even[6:],
                                      odd[:3], odd[3:6], odd[6:]]


@pytest.mark.parametrize("split_every", [None, 3])
def test_no_block_moves_and_the_answer_is_numpys(cluster, rng, split_every):
    host = data(rng, np.float64, (64, 9))
    units = data(rng, np.float64, (64, 9), units=True)
    x, x_units = placed(cluster, host), placed(cluster, units)
    blocks = block_keys(x) | block_keys(x_units)
    before = moved_keys(cluster)
    for op in OPS:
        product = op.endswith("prod")
        got = ours(op, x_units if product else x, split_every=split_every)
        want = numpy_answer(op, units if product else host)
        assert same(got, want), (op, got, want)
    moved = moved_keys(cluster) - before
    # Partials moved to be combined, and no block.
    assert moved and not moved & blocks, moved & blocks


def test_a_persisted_array_is_cut_where_its_blocks_are(cluster, rng):
    host = data(rng, np.float64, (60, 9))
    x = da.from_array(host, chunks=(ROWS, 9)).persist()
    distributed.wait(x)
    holders = distributed.default_client().who_has(x)
    owners = [min(holders[key]) for key in
              (k for row in x.__dask_keys__() for k in row)]
    assert len(set(owners)) == 2      # the scheduler used both workers
    groups = cd._block_groups(x, 32)
    assert sorted(block for group in groups for block in group) == \
        sorted(np.ndindex(*x.numblocks))
    for group in groups:
        assert len({owners[block[0]] for block in group}) == 1, group
    before = moved_keys(cluster)
    assert same(ours("sum", x), numpy_answer("sum", host))
    assert not (moved_keys(cluster) - before) & set(holders)


def test_a_block_whose_worker_is_not_known_is_a_task_of_its_own(cluster,
                                                                 rng):
    # Not persisted: the scheduler picks each block's worker when it runs.
    host = data(rng, np.float64, (40, 9))
    x = da.from_array(host, chunks=(ROWS, 9))
    assert first_level_tasks(cd.argmin(x)) == x.npartitions
    assert same(ours("argmin", x), numpy_answer("argmin", host))
