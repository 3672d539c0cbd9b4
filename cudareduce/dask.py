"""cudareduce's operators over Dask arrays of CuPy or NumPy chunks.

``cudareduce.dask.sum(x)`` (and every other operator of the module, with
cudareduce's own ``method``, ``threads``, ``dtype``, ``axis`` and
``keepdims``, and ``split_every``) builds, over the whole array (``axis``
None, or naming every axis), a lazy 0-d :class:`dask.array.Array` (with
``keepdims``, one task more reshapes it): tasks of ``split_every`` blocks
each (32 by default), then Dask's own tree of combines
(``dask.array.reductions._tree_reduce``, as Dask's arg reductions build
theirs), ``split_every`` partials at a time:

- each block is reduced where it lives (a CuPy chunk on its own GPU) into
  a *partial*: one element of an array of the chunk's kind (a CuPy array
  stays on the device: the chunk function writes it through ``out=`` and
  does not wait for the GPU), none for an empty chunk; a task's partials
  are combined in the task, so that a Dask task (0.2 to 0.6 ms of the
  scheduler's time) serves many blocks, where Dask's own ``x.sum()``
  spends one on each;
- partials are combined in a tree by the operator itself, still on the
  device;
- the last step gives the value as Dask's own ``x.sum()`` does: a 0-d
  CuPy array for CuPy chunks, a NumPy scalar for NumPy chunks.

What a partial holds, by operator: a sum, product, extreme, ``any`` or
``all`` of the chunk (``nansum`` and ``nanprod`` combine as ``sum`` and
``prod``); ``mean``: the sum in the kernels' accumulator (float32 for
float16, float64 for integers: ``_cudareduce.reduction_dtypes``), the
count being the array's size; ``nanmean``: the NaN-skipping sum and the
count of numbers; either sum rounded once to NumPy's dtype of it before
the divide;
the index operators: the chosen element's value and its index in the
whole array (NumPy's C-order flat index), ties between chunks going to the
lower index.  The finishing steps are NumPy's (mean's divide, nanmean's
and nanargmin's all-NaN rules).  With ``exact=True`` (sum, nansum, mean
and nanmean of floats), a partial is the unrounded state of the block's
exact sum (on the host, whatever the chunk's kind), the combines add
states exactly, and the last step rounds once: the bits of cudareduce's
own ``exact=True`` call over the whole array, for any chunking.

Along some axes (``axis=1``, ``axis=(0, 2)``; an index operator takes one
int, a tuple being NumPy's TypeError), the graph is built as Dask's own
``dask.array.reduction`` (``arg_reduction``) builds it, to the same
chunks, shape and dtype: a task a block, whose partial is cudareduce's
reduction of the block along the axes with ``keepdims`` (an array of the
chunk's kind on its device, not waited for), then Dask's tree of
combines along those axes, ``split_every`` at a time as Dask's (by
default Dask's config, 4), each concatenating its partials along the
axes (a partial of another GPU copied first) and reducing them again.
The partials are the whole array's, slice by slice: sums, products and
extremes (``nansum`` and ``nanprod`` combining as ``sum`` and ``prod``),
a mean's sums in the accumulator and nanmean's counts of numbers, the
index operators' chosen values with their indices along the axis (the
block's start added; ties to the lower index); a block with no element
along an axis gives an empty partial, which the concatenation skips.
The last step is NumPy's along axes: an empty axis gives NumPy's
identity or error (the operator on the empty partials), mean divides
each sum by its count; a slice all NaN is nanargmin's ValueError for
NumPy chunks, and -1 for CuPy chunks, as cudareduce answers device data
(no wait for the GPU).  The result computes to an array of the chunks'
kind.

Chunk functions run on Dask's threaded scheduler and on ``dask.distributed``
workers alike (dask-cuda's ``LocalCUDACluster``: one worker per GPU).
Over the whole array, a task's blocks are consecutive in the block grid
(along axes a task is one block, as in Dask's own), except on a cluster of
several workers, where they are blocks that one worker holds (a block not
persisted there yet is a task of its own), so that no block moves between
workers, only partials; on the threaded scheduler, partials of chunks on
several GPUs are copied to one of them to be combined (over the whole
array, both checked on two H100s: tests/test_dask_gpu.py,
test_dask_cluster_gpu.py).

:func:`reduce_array` is the one call of cudareduce on a chunk or on
partials (along axes too); the tests without a GPU replace it here (the
whole array's graph), or the operators it calls (either graph).  The
graph along axes is built by :mod:`cudareduce._dask_axes`; what both
graphs do to a chunk or to partials is :mod:`cudareduce._dask_chunks`'.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import operator
import sys
from typing import Any

import numpy as np

import cudareduce
from cudareduce import _cudareduce

try:
    import dask.array as da
    # Dask's own tree of combines (dask.array.reductions' arg reductions
    # use it as this module's index operators do).
    from dask.array.reductions import _tree_reduce
    from dask.base import tokenize
    from dask.core import flatten
    from dask.highlevelgraph import HighLevelGraph
except ImportError as error:      # pragma: no cover - the optional extra
    raise ImportError("cudareduce.dask needs Dask: python -m pip install "
                      "-e \".[dask]\" from a checkout of cudareduce, or "
                      "python -m pip install \"dask[array]\"") from error

# After Dask's, so that a missing Dask gives the message above.
from cudareduce._dask_axes import _reduced_axes, _reduction_along
from cudareduce._dask_chunks import (_FACTS, _finish_mean, _holds_nan,
                                     _is_nan, _module, _on_current_device,
                                     _on_device_of, _result, reduce_array)

__all__ = list(_cudareduce.OPERATORS) + ["reduce_array"]

# The public name's home, as before the split (pickles and help() say
# cudareduce.dask.reduce_array).
reduce_array.__module__ = __name__

#: Blocks reduced in one task, and partials combined in one, by default:
#: a task of Dask's threaded scheduler costs 0.2-0.6 ms of the host's time,
#: a chunk's reduction into a device out about 20 us (256 of them in a
#: plain loop, 5.1 ms), so that 32 blocks a task spend more in the calls
#: than in the task (H100 hosts:
#: docs/recorded/dask-2026-11-25-h100.txt).
_BLOCKS_PER_TASK = 32


def _partial(op: str, chunk: Any, dtype: np.dtype, method: str,
             threads: int | None, requested: Any = None) -> Any:
    """`op` of `chunk` as a one-element array of `dtype` (empty for an
    empty chunk), on the chunk's device, not waited for."""
    xp = _module(chunk)
    with _on_device_of(chunk):
        out = xp.empty(0 if chunk.size == 0 else 1, dtype)
        if chunk.size:
            # No warnings.catch_warnings here: its filters are the
            # process's, and the threaded scheduler runs chunks at once.
            # A device out gives no warning; a NumPy chunk's may (an
            # all-NaN chunk's nanmin: docs/dask.md).
            reduce_array(op, chunk, out, method, threads, requested)
    return out


def _flatten(parts: Any) -> list:
    """The partials Dask hands a combine step (nested lists, one level per
    axis, with concatenate=False), in order."""
    if isinstance(parts, list):
        return [p for part in parts for p in _flatten(part)]
    return [parts]


def _join(arrays: list, dtype: np.dtype) -> Any:
    """The one-element (or empty) arrays `arrays`, end to end, on the
    device of the first."""
    xp = _module(arrays[0]) if arrays else np
    if not arrays:
        return xp.empty(0, dtype)
    with _on_device_of(arrays[0]):
        return xp.concatenate([_on_current_device(xp, a) for a in arrays])


# --- value operators ---------------------------------------------------------

def _value_chunk(x, *, op, dtype, method, threads, requested):
    return {"value": _partial(op, x, dtype, method, threads, requested)}


def _value_combine(parts, axis=None, keepdims=False, *, op, dtype, method,
                   threads, final=False, computing_meta=False):
    if computing_meta:
        return parts           # Dask asks the result's meta: the given one
    values = _join([p["value"] for p in _flatten(parts)], dtype)
    # Partials combine by the operator itself, but a NaN-skipping one with
    # an identity (nansum, nanprod: each NaN counted as the identity) by
    # its form without NaN: a NaN partial is then arithmetic's (inf - inf),
    # which NumPy's one reduction keeps too.  (nanmin's NaN partial is an
    # all-NaN chunk's, which nanmin skips.)
    facts = _FACTS[op]
    combined = facts.without_nan if facts.identity is not None else op
    # Partial sums and products of a small type are summed in it (an int8
    # dtype= wraps in int8 as NumPy's does).
    requested = dtype if _FACTS[combined].takes_dtype else None
    if final:
        with _on_device_of(values):
            out = _module(values).empty((), dtype)
            reduce_array(combined, values, out, method, threads, requested)
        return _result(out)
    return {"value": _partial(combined, values, dtype, method, threads,
                              requested)}


# --- mean and nanmean -------------------------------------------------------

def _mean_chunk(x, *, counts, sum_dtype, method, threads):
    """A block's partial of a mean: its sum, and where the operator
    counts (nanmean: its numbers) their count."""
    parts = {"value": _partial("nansum" if counts else "sum", x,
                               sum_dtype, method, threads, sum_dtype)}
    if counts:
        with _on_device_of(x):
            numbers = ~_module(x).isnan(x)
        parts["count"] = _partial("sum", numbers, np.dtype(np.int64), method,
                                  threads)
    return parts


def _mean_combine(parts, axis=None, keepdims=False, *, counts, sum_dtype,
                  reduced, dtype, size, method, threads, final=False,
                  computing_meta=False):
    if computing_meta:
        return parts
    parts = _flatten(parts)
    keys = ("value", "count") if counts else ("value",)
    dtypes = {"value": sum_dtype, "count": np.dtype(np.int64)}
    combined = {key: _value_combine([{"value": p[key]} for p in parts],
                                    axis, keepdims, op="sum",
                                    dtype=dtypes[key], method=method,
                                    threads=threads, final=final)
                for key in keys}
    if not final:
        return {key: value["value"] for key, value in combined.items()}
    # The sum in the accumulator, rounded once to NumPy's dtype of it
    # (numpy.nanmean of float16 divides a float16 sum).
    with _on_device_of(combined["value"]):
        total = combined["value"].astype(reduced)
    return _finish_mean(total, combined.get("count", size), dtype,
                        skips_nan=counts)


# --- exact sums ---------------------------------------------------------------

def _exact_chunk(x, *, op, method, threads, requested):
    """A block's partial of an exact sum (issue 44): the unrounded state
    of its elements' exact sum, a NumPy array on the host whatever the
    chunk's kind (an empty chunk's is zero)."""
    return {"state": _cudareduce.exact_state(op, x, method, threads,
                                             requested)}


def _exact_combine(parts, axis=None, keepdims=False, *, op, element, size,
                   requested, on_device, final=False, computing_meta=False):
    """States added, exactly: any grouping gives the same sum.  With
    `final`, rounded once as cudareduce's exact=True call over the whole
    array rounds it (the same bits, NumPy's warnings); a 0-d CuPy array
    for CuPy chunks (`on_device`), as Dask's own sum gives."""
    if computing_meta:
        return parts
    state = _cudareduce.exact_add_states(p["state"] for p in _flatten(parts))
    if not final:
        return {"state": state}
    value = _cudareduce.exact_round_state(op, state, element, size,
                                          requested)
    if on_device:
        import cupy  # noqa: PLC0415  (CuPy chunks: CuPy is there)
        return cupy.asarray(value)
    return value


# --- index operators -------------------------------------------------------

def _index_chunk(x, *, op, method, threads, block_info):
    """A block's partial of an index operator: its chosen element's value
    and that element's C-order index in the whole array."""
    xp = _module(x)
    if x.size == 0:
        return {"value": xp.empty(0, x.dtype), "index": xp.empty(0, np.int64)}
    location = block_info[0]
    with _on_device_of(x):
        # An all-NaN chunk's nanargmin is -1 into a device out, NumPy's
        # ValueError into a NumPy one: its first element, a NaN, stands
        # for it (the last step raises NumPy's error if a NaN wins).
        try:
            local = _partial(op, x, np.dtype(np.int64), method, threads)
        except ValueError as error:
            if str(error) != "All-NaN slice encountered":
                raise
            local = xp.zeros(1, np.int64)
        local = xp.maximum(local, 0)
        where = xp.unravel_index(local, x.shape)
        index = xp.ravel_multi_index(
            tuple(w + start for w, (start, _) in
                  zip(where, location["array-location"])),
            location["shape"])
        return {"value": x.reshape(-1)[local],
                "index": index.astype(np.int64)}


def _index_combine(parts, axis=None, keepdims=False, *, op, method, threads,
                   final=False, computing_meta=False):
    """The partial that wins: the extreme by cudareduce's own order (a
    NaN first, unless the operator skips NaN; complex values by real part,
    then imaginary part), of equal ones the lowest index; no host wait."""
    if computing_meta:
        return parts
    parts = _flatten(parts)
    values = _join([p["value"] for p in parts],
                   np.dtype(parts[0]["value"].dtype))
    indices = _join([p["index"] for p in parts], np.dtype(np.int64))
    xp = _module(values)
    with _on_device_of(values):
        if values.size:
            best = xp.empty(1, values.dtype)
            # The extreme the index operator finds (NumPy's names: argmin
            # finds min's element).  nanmin of values that are all NaN is
            # NaN: then every one is a candidate, and the last step raises.
            reduce_array(op.replace("arg", ""), values, best, method,
                         threads)
            nan = _is_nan(xp, values)
            candidates = xp.where(_is_nan(xp, best), nan, values == best)
            ranks = xp.where(candidates, indices, np.iinfo(np.int64).max)
            chosen = xp.argmin(ranks).reshape(1)
            values, indices = values[chosen], indices[chosen]
    if not final:
        return {"value": values, "index": indices}
    if values.size == 0:
        raise ValueError(_FACTS[op].empty_error)
    if _FACTS[op].skips_nan and bool(_is_nan(xp, values)[0]):
        raise ValueError("All-NaN slice encountered")
    return _result(indices.reshape(()))


# --- the operators -----------------------------------------------------------

def _reduction(op: str, x: Any, method: str, threads: int | None,
               dtype: Any, split_every: Any, axis: Any = None,
               keepdims: bool = False, exact: bool = False) -> da.Array:
    """The lazy reduction of `x` by `op` along `axis` (None: the whole
    array); with `exact` (sum, nansum, mean, nanmean), the exact sum."""
    if not isinstance(x, da.Array):
        x = da.asarray(x)
    if dtype is not None and not _FACTS[op].takes_dtype:
        raise TypeError(f"cudareduce.dask.{op} takes no dtype")
    axes = _reduced_axes(op, x, axis)
    group = _blocks_per_task(split_every)
    element = np.dtype(x.dtype)
    if _FACTS[op].skips_nan and not _holds_nan(element):
        # NumPy's NaN forms of integers and bool: the plain operators.
        op = _FACTS[op].without_nan
    facts = _FACTS[op]
    # NumPy's dtypes, as cudareduce's own call resolves them: a mean's sum
    # (accumulated in the kernels' type, as the partials are), the result.
    reduced, result, accumulator = _cudareduce.reduction_dtypes(
        op, element, dtype)
    common = {"method": method, "threads": threads}
    empty = x._meta.reshape((0,) * x.ndim).reshape(-1)[:0]
    if empty.dtype.kind == "c" and result.kind != "c":
        empty = empty.real     # no ComplexWarning for an empty meta
    meta = empty.astype(result)
    # As cudareduce's own call: a sum into integers or bool is exact
    # already, and an empty one has nothing to round.
    exact = bool(exact) and x.size > 0 and reduced.kind not in "biu"
    if exact and axes is not None:
        raise ValueError("exact=True reduces the whole array only, for "
                         "now: not along axes")
    if axes is not None:
        return _reduction_along(op, x, axes, bool(keepdims), dtype,
                                split_every, (reduced, result, accumulator),
                                meta.reshape((0,) * x.ndim), common)
    if exact:
        chunk = functools.partial(_exact_chunk, op=op, requested=dtype,
                                  **common)
        combine = functools.partial(_exact_combine, op=op, element=element,
                                    size=x.size, requested=dtype,
                                    on_device=_module(meta) is not np)
    elif facts.gives_index:
        chunk = functools.partial(_index_chunk, op=op, **common)
        combine = functools.partial(_index_combine, op=op, **common)
    elif facts.divides_by_count:
        chunk = functools.partial(_mean_chunk, counts=facts.counts,
                                  sum_dtype=accumulator, **common)
        combine = functools.partial(_mean_combine, counts=facts.counts,
                                    sum_dtype=accumulator, reduced=reduced,
                                    dtype=result, size=x.size, **common)
    else:
        chunk = functools.partial(_value_chunk, op=op, dtype=result,
                                  requested=dtype, **common)
        combine = functools.partial(_value_combine, op=op, dtype=result,
                                    **common)
    groups = _block_groups(x, group)
    if len(groups) == 1:
        # One task gives the value, with no tree: a task costs the
        # threaded scheduler 0.2-0.6 ms, a fifth of 8 GiB's reduction on
        # an H100 (docs/recorded/dask-2026-11-25-h100.txt).
        value = _group_partials(x, chunk, combine, facts.gives_index, meta,
                                groups, final=True)
    else:
        partials = _group_partials(x, chunk, combine, facts.gives_index,
                                   meta, groups)
        value = _tree_reduce(partials, functools.partial(combine,
                                                         final=True),
                             (0,), False, result, group, combine,
                             concatenate=False, reduced_meta=meta)
    return _with_kept_axes(value, x.ndim, meta) if keepdims else value


def _with_kept_axes(value: da.Array, ndim: int, meta: Any) -> da.Array:
    """The whole array's 0-d `value` as keepdims gives it: of shape
    ``(1,) * ndim``, one task more."""
    name = "cudareduce-keepdims-" + tokenize(value, ndim)
    layer = {(name,) + (0,) * ndim: (
        operator.methodcaller("reshape", (1,) * ndim), (value.name,))}
    graph = HighLevelGraph.from_collections(name, layer,
                                            dependencies=[value])
    return da.Array(graph, name, chunks=((1,),) * ndim,
                    meta=meta.reshape((0,) * ndim))


def _blocks_per_task(split_every: Any) -> int:
    """The fan-in of every level: ``split_every`` (an int, or a dict's
    product over the axes), else _BLOCKS_PER_TASK."""
    if split_every is None:
        return _BLOCKS_PER_TASK
    if isinstance(split_every, dict):
        # (builtins': this module's max is the operator)
        return builtins.max(int(np.prod(list(split_every.values()))), 2)
    if int(split_every) < 2:
        raise ValueError("split_every must be at least 2")
    return int(split_every)


def _block_groups(x: da.Array, group: int) -> list[list[tuple]]:
    """The blocks of `x` (their indices in the block grid) that one task
    reduces, at most `group` a task: blocks that live on one worker
    together, each worker's in C order of the grid (:func:`_block_owners`),
    so that a task's blocks are where the task runs and only partials move
    between workers."""
    by_owner: dict[Any, list[tuple]] = {}
    for block, owner in zip(np.ndindex(*x.numblocks), _block_owners(x)):
        by_owner.setdefault(owner, []).append(block)
    return [members[first:first + group] for members in by_owner.values()
            for first in range(0, len(members), group)]


def _block_owners(x: da.Array) -> list:
    """Where each block of `x` lives, in C order of the block grid, as far
    as :func:`_block_groups` needs to know: on a ``dask.distributed``
    cluster of several workers (the default client's), the worker that
    holds a persisted block (the lowest address of those holding a copy),
    and a place of its own for every other block, whose worker the
    scheduler picks when it runs; None for every block where all run in
    one place (Dask's threaded scheduler, a cluster of one worker).

    Dask's scheduler runs a task where most of its dependencies' bytes
    are, so that a task of blocks from two workers moves one worker's to
    the other (8 of 16 blocks on a ``LocalCluster`` of two workers:
    tests/test_dask_cluster_offline.py); a block whose worker is not known yet
    (not persisted, or still being computed) is its own task, as Dask's
    own reductions make it."""
    keys = list(flatten(x.__dask_keys__()))
    distributed = sys.modules.get("distributed")   # imported with a client
    try:
        client = distributed.default_client() if distributed else None
    except ValueError:                # no client: the threaded scheduler
        client = None
    if client is None:
        return [None] * len(keys)
    if client.asynchronous:           # no blocking call: each its own task
        return [("block", i) for i in range(len(keys))]
    if len(client.nthreads()) <= 1:
        return [None] * len(keys)
    # A persisted block's key holds the Future of its data.
    graph = x.__dask_graph__()
    values = [graph.get(key) for key in keys]
    futures = [v for v in values if isinstance(v, distributed.Future)]
    holders = client.who_has(futures) if futures else {}
    return [builtins.min(holders[value.key])
            if isinstance(value, distributed.Future) and holders.get(value.key)
            else ("block", i) for i, value in enumerate(values)]


def _group_partials(x: da.Array, chunk, combine, wants_location: bool,
                    meta: Any, groups: list[list[tuple]],
                    final: bool = False) -> da.Array:
    """A 1-d Dask array of partials, one per task, a task for each of
    `groups` (blocks of `x`): each task reduces its blocks one by one
    (`chunk`, given their locations in `x` where `wants_location`) and
    combines their partials (`combine`), all on the device.  With `final`
    (every block in one task), the 0-d result itself."""
    name = "cudareduce-partials-" + tokenize(x, chunk, combine, groups,
                                             final)
    starts = [np.concatenate(([0], np.cumsum(c)[:-1])) for c in x.chunks]
    layer = {}
    for task, members in enumerate(groups):
        locations = [
            [{"array-location": [
                (int(starts[axis][i]),
                 int(starts[axis][i]) + x.chunks[axis][i])
                for axis, i in enumerate(block)], "shape": x.shape}]
            for block in members] if wants_location else None
        layer[(name,) if final else (name, task)] = (
            functools.partial(_group_partial, chunk=chunk, combine=combine,
                              final=final),
            [(x.name, *block) for block in members], locations)
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x])
    return da.Array(graph, name, chunks=() if final else ((1,) * len(layer),),
                    meta=meta)


def _group_partial(blocks: list, locations: list | None, *, chunk,
                   combine, final: bool) -> Any:
    """The partial of `blocks` (one task's): each block's, combined; with
    `final`, the value."""
    if locations is None:
        parts = [chunk(block) for block in blocks]
    else:
        parts = [chunk(block, block_info=location)
                 for block, location in zip(blocks, locations)]
    if final:
        return combine(parts, final=True)
    return parts[0] if len(parts) == 1 else combine(parts)


def _make_operator(op: str):
    # exact= where cudareduce's own operator takes it (sum, nansum, mean,
    # nanmean).
    takes_exact = "exact" in inspect.signature(
        getattr(cudareduce, op)).parameters
    if takes_exact:
        def function(x: Any, method: str = cudareduce.DEFAULT_METHOD, *,
                     threads: int | None = None, dtype: Any = None,
                     split_every: Any = None, axis: Any = None,
                     keepdims: bool = False, exact: bool = False
                     ) -> da.Array:
            return _reduction(op, x, method, threads, dtype, split_every,
                              axis, keepdims, exact)
    else:
        def function(x: Any, method: str = cudareduce.DEFAULT_METHOD, *,
                     threads: int | None = None, dtype: Any = None,
                     split_every: Any = None, axis: Any = None,
                     keepdims: bool = False) -> da.Array:
            return _reduction(op, x, method, threads, dtype, split_every,
                              axis, keepdims)
    function.__name__ = function.__qualname__ = op
    axis_doc = ("None or int, optional\n    The axis to reduce (None: the "
                "whole array), as dask.array's arg reductions take it; a "
                "tuple is a TypeError" if _FACTS[op].gives_index else
                "None, int or tuple of ints, optional\n    The axes to "
                "reduce (None: every axis), as dask.array's reductions "
                "take them")
    exact_doc = (
        "exact : bool, optional\n    As cudareduce.{op}'s, over the whole "
        "array: each chunk's exact sum kept unrounded (its state), the "
        "states added exactly and rounded once, so that the value has the "
        "bits of one exact call over the array, for any chunking.\n"
        .format(op=op) if takes_exact else "")
    function.__doc__ = (
        f"cudareduce.{op} of a Dask array, lazily.\n\n"
        f"Parameters\n----------\n"
        f"x : dask.array.Array\n    Chunks of CuPy or NumPy arrays (or "
        f"anything dask.array.asarray takes).\n"
        f"method, threads, dtype\n    As cudareduce.{op}'s, for every "
        f"chunk and every combine step.\n"
        f"split_every : int or dict, optional\n    Partials combined at a "
        f"time, as dask.array's reductions take it.\n"
        f"axis : {axis_doc}.\n"
        f"keepdims : bool, optional\n    Keep each reduced axis with "
        f"extent 1.\n"
        f"{exact_doc}\n"
        f"Returns\n-------\ndask.array.Array\n    The shape, dtype and "
        f"chunks of Dask's own {op}; ``.compute()`` gives NumPy's answer: "
        f"over every axis a 0-d array of the chunks' kind (a NumPy "
        f"scalar for NumPy chunks), along some an array of their kind.\n")
    return function


for _op in _cudareduce.OPERATORS:
    globals()[_op] = _make_operator(_op)
del _op
