"""cudareduce.dask on a dask-cuda ``LocalCUDACluster`` (one worker process
per GPU, the chunks made and kept on the workers): every operator against
NumPy's answer on the same data, for uneven and empty chunks, NaNs in some
chunks and ``split_every``, as tests/test_dask_gpu.py checks them on the
threaded scheduler.  The cluster is started once for the module (a few
seconds).  Needs dask-cuda and distributed (``cudareduce[dask]`` does not
bring them: the GPU machine gets their wheels)."""
from __future__ import annotations

import numpy as np
import pytest

import cudareduce
from test_dask_gpu import CHUNKINGS, OPS, SHAPE, quietly
from test_dask_offline import data, same

da = pytest.importorskip("dask.array")
cd = pytest.importorskip("cudareduce.dask")

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def client():
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    with dask_cuda.LocalCUDACluster(dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.mark.parametrize("split_every", [None, 3])
@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64],
                         ids=str)
def test_cupy_chunks_on_the_workers(client, cupy, rng, seed_note, dtype,
                                    chunks, split_every):
    wrong = []
    methods = list(cudareduce.methods())
    for k, op in enumerate(OPS):
        host = data(rng, dtype, SHAPE, units=op.endswith("prod"))
        # The chunks are made on the workers, from the host data, and
        # kept there (persist), as a cluster's arrays live.
        x = da.from_array(host, chunks=chunks).map_blocks(
            cupy.asarray, meta=cupy.empty((0, 0), dtype)).persist()
        method = methods[k % len(methods)]
        result = getattr(cd, op)(x, method, split_every=split_every)
        got = quietly(lambda: client.compute(result).result())
        want = quietly(lambda: getattr(np, op)(host))
        if not same(cupy.asnumpy(got), want):
            wrong.append(f"{op} ({method}): got {got!r}, NumPy {want!r}")
    assert not wrong, f"{wrong[:4]} {seed_note}"
