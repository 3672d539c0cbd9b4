"""cudareduce.dask along some axes (``axis=1``, ``axis=(0, 2)``).

A reduction along some axes is built as Dask's own ``reduction`` (the
index operators': ``arg_reduction``): a task a block, whose partial keeps
the reduced axes with extent 1 (``keepdims``), then Dask's tree of
combines along them, ``split_every`` partials at a time, each combine
(and the last step) concatenating its partials along the reduced axes
and reducing them again.  `axes`: the reduced ones, sorted,
non-negative (:func:`_reduced_axes`, which reads ``axis=`` for
:mod:`cudareduce.dask` whichever graph it builds).  The names are
cudareduce.dask's, from before its two graphs had a module each.
"""
from __future__ import annotations

import builtins
import functools
import numbers
from typing import Any

# No guard: cudareduce.dask, which imports this module, says what to
# install where Dask is not there.
import dask.array as da
import numpy as np
from dask.array.reductions import _tree_reduce
from dask.array.utils import validate_axis
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from cudareduce._dask_chunks import (_FACTS, _finish_mean, _is_nan,
                                     _module, _on_current_device,
                                     _on_device_of, reduce_array)

__all__ = ["_reduced_axes", "_reduction_along"]


def _reduced_axes(op: str, x: da.Array, axis: Any) -> tuple | None:
    """The axes `op` reduces, as Dask's own reductions take `axis`: a
    sorted tuple of non-negative axes, or None for every axis
    (None, a tuple naming them all, an index operator's one axis of a 1-d
    array).  Dask's errors: AxisError, TypeError for an axis that is no
    integer (an index operator's tuple too, as NumPy's argmin); NumPy's
    ValueError for a repeated axis, here rather than when computed."""
    if axis is None:
        return None
    if _FACTS[op].gives_index:
        if not isinstance(axis, numbers.Integral):
            raise TypeError(f"'{type(axis).__name__}' object cannot be "
                            f"interpreted as an integer")
        axes = (validate_axis(axis, x.ndim),)
    else:
        axes = validate_axis(
            (axis,) if isinstance(axis, numbers.Integral) else axis, x.ndim)
    if len(set(axes)) < len(axes):
        raise ValueError("duplicate value in 'axis'")
    axes = tuple(sorted(axes))
    return None if axes == tuple(range(x.ndim)) else axes


def _kept_shape(shape: tuple, axes: tuple) -> tuple:
    """The shape of a keepdims partial of an array of `shape`: each
    reduced axis 1, or 0 where the array has no element along it (its
    partial is then empty, and concatenated partials skip it)."""
    return tuple(builtins.min(n, 1) if i in axes else n
                 for i, n in enumerate(shape))


def _along(op: str, a: Any, axes: tuple, dtype: np.dtype, method: str,
           threads: int | None, requested: Any = None) -> Any:
    """`op` of `a` along `axes`, keepdims, an array of `a`'s kind and
    `dtype` on its device, not waited for; for an empty `a`, an empty one
    of :func:`_kept_shape` (no call)."""
    xp = _module(a)
    with _on_device_of(a):
        if a.size == 0:
            return xp.empty(_kept_shape(a.shape, axes), dtype)
        return reduce_array(op, a, None, method, threads, requested,
                            axis=axes)


def _leaf(parts: Any) -> dict:
    """The first partial of Dask's nested lists of them."""
    while isinstance(parts, list):
        parts = parts[0]
    return parts


def _joined(parts: Any, key: str, axes: tuple) -> Any:
    """The `key` arrays of `parts` (Dask's nested lists, with
    concatenate=False: a level per reduced axis, in the axes' order),
    concatenated along `axes`, on the device of the first."""
    first = _leaf(parts)[key]
    xp = _module(first)

    def join(nested: Any, axes: tuple) -> Any:
        if not isinstance(nested, list):
            return _on_current_device(xp, nested[key])
        arrays = [join(part, axes[1:]) for part in nested]
        return arrays[0] if len(arrays) == 1 else xp.concatenate(
            arrays, axis=axes[0])

    with _on_device_of(first):
        return join(parts, axes)


def _dropped(value: Any, axes: tuple, keepdims: bool) -> Any:
    """The last step's keepdims `value` without the reduced axes, unless
    `keepdims`."""
    if keepdims or not axes:
        return value
    with _on_device_of(value):
        return _module(value).squeeze(value, axis=axes)


def _value_chunk_along(x, *, axes, op, dtype, method, threads, requested):
    """A block's partial along `axes`: its sum, product, extreme..."""
    return {"value": _along(op, x, axes, dtype, method, threads,
                            requested)}


def _value_combine_along(parts, axis, keepdims, *, op, dtype, method,
                         threads, final=False, computing_meta=False):
    """Partials along the axes `axis` (Dask's name; a tuple) combined as
    :func:`cudareduce.dask._value_combine` combines whole ones: by the
    operator, nansum and nanprod as sum and prod; the last step calls
    cudareduce on partials that are empty along an axis too (NumPy's
    identity, or its error)."""
    if computing_meta:
        return parts
    values = _joined(parts, "value", axis)
    facts = _FACTS[op]
    combined = facts.without_nan if facts.identity is not None else op
    requested = dtype if _FACTS[combined].takes_dtype else None
    if not final:
        return {"value": _along(combined, values, axis, dtype, method,
                                threads, requested)}
    with _on_device_of(values):
        value = reduce_array(combined, values, None, method, threads,
                             requested, axis=axis)
    return _dropped(value, axis, keepdims)


def _mean_chunk_along(x, *, axes, counts, sum_dtype, method, threads):
    """A block's partial of a mean along `axes`: its sums (nanmean: of its
    numbers, and their counts)."""
    parts = {"value": _along("nansum" if counts else "sum", x, axes,
                             sum_dtype, method, threads, sum_dtype)}
    if counts:
        with _on_device_of(x):
            numbers = ~_module(x).isnan(x)
        parts["count"] = _along("sum", numbers, axes, np.dtype(np.int64),
                                method, threads)
    return parts


def _mean_combine_along(parts, axis, keepdims, *, counts, sum_dtype,
                        reduced, dtype, size, method, threads, final=False,
                        computing_meta=False):
    """Sums (and counts) added; the last step divides as NumPy's mean
    along axes does: the sum rounded once to NumPy's dtype of it, over
    the count (mean: `size`, the reduced axes' elements)."""
    if computing_meta:
        return parts
    keys = ("value", "count") if counts else ("value",)
    dtypes = {"value": sum_dtype, "count": np.dtype(np.int64)}
    combined = {}
    for key in keys:
        joined = _joined(parts, key, axis)
        if final:
            with _on_device_of(joined):
                combined[key] = reduce_array("sum", joined, None, method,
                                             threads, dtypes[key], axis=axis)
        else:
            combined[key] = _along("sum", joined, axis, dtypes[key], method,
                                   threads, dtypes[key])
    if not final:
        return combined
    with _on_device_of(combined["value"]):
        total = combined["value"].astype(reduced)
    mean = _finish_mean(total, combined.get("count", size), dtype,
                        skips_nan=counts)
    return _dropped(mean, axis, keepdims)


def _index_chunk_along(x, *, axes, op, offset, method, threads):
    """A block's partial of an index operator along its one axis: each
    slice's chosen element's value, and its index along the axis in the
    whole array (the block's `offset` added)."""
    xp = _module(x)
    (a,) = axes
    if x.size == 0:
        shape = _kept_shape(x.shape, axes)
        return {"value": xp.empty(shape, x.dtype),
                "index": xp.empty(shape, np.int64)}
    with _on_device_of(x):
        # A slice all NaN is -1 in a device result, NumPy's ValueError for
        # a NumPy one: then that slice's first element, a NaN, stands for
        # it, as in a whole chunk (the last step gives NumPy's answer if a
        # NaN wins).
        try:
            local = reduce_array(op, x, None, method, threads, axis=a)
        except ValueError as error:
            if str(error) != "All-NaN slice encountered":
                raise
            nan = _is_nan(xp, x).all(axis=a, keepdims=True)
            local = reduce_array(op, xp.where(nan, xp.zeros((), x.dtype), x),
                                 None, method, threads, axis=a)
        local = xp.maximum(local, 0)
        return {"value": xp.take_along_axis(x, local, axis=a),
                "index": local.astype(np.int64) + offset}


def _index_combine_along(parts, axis, keepdims, *, op, method, threads,
                         final=False, computing_meta=False):
    """Each slice's winning partial, as
    :func:`cudareduce.dask._index_combine` picks the whole array's: the
    extreme, of equal ones the lowest index.  The last step: NumPy's
    ValueError for an empty axis; a slice all NaN of a NaN-skipping
    operator is NumPy's ValueError for a NumPy result, -1 in a device one
    (cudareduce's answer there: no host wait)."""
    if computing_meta:
        return parts
    (a,) = axis
    values = _joined(parts, "value", axis)
    indices = _joined(parts, "index", axis)
    xp = _module(values)
    if final and values.shape[a] == 0:
        raise ValueError(_FACTS[op].empty_error)
    with _on_device_of(values):
        if values.size:
            best = reduce_array(op.replace("arg", ""), values, None, method,
                                threads, axis=a)
            candidates = xp.where(_is_nan(xp, best), _is_nan(xp, values),
                                  values == best)
            ranks = xp.where(candidates, indices, np.iinfo(np.int64).max)
            chosen = xp.argmin(ranks, axis=a, keepdims=True)
            values = xp.take_along_axis(values, chosen, axis=a)
            indices = xp.take_along_axis(indices, chosen, axis=a)
        else:
            shape = _kept_shape(values.shape, axis)
            values, indices = values.reshape(shape), indices.reshape(shape)
        if not final:
            return {"value": values, "index": indices}
        if _FACTS[op].skips_nan:
            nan = _is_nan(xp, values)
            if xp is np:
                if nan.any():
                    raise ValueError("All-NaN slice encountered")
            else:
                indices = xp.where(nan, -1, indices)
        return _dropped(indices.astype(np.intp), axis, keepdims)


def _reduction_along(op: str, x: da.Array, axes: tuple, keepdims: bool,
                     requested: Any, split_every: Any, dtypes: tuple,
                     meta: Any, common: dict) -> da.Array:
    """`op` of `x` along `axes` (some of its axes), as Dask's own
    ``reduction`` builds it: a task a block (its partial keeps the reduced
    axes, extent 1), then Dask's tree of combines (``_tree_reduce``) along
    them, ``split_every`` at a time as Dask's (its default: Dask's
    config), to the chunks Dask's own reduction gives.  `dtypes`:
    ``_cudareduce.reduction_dtypes``'; `meta`: the result's, of
    ``x.ndim`` dimensions."""
    reduced, result, accumulator = dtypes
    facts = _FACTS[op]
    if facts.gives_index:
        chunk = functools.partial(_index_chunk_along, op=op, **common)
        combine = functools.partial(_index_combine_along, op=op, **common)
    elif facts.divides_by_count:
        size = int(np.prod([x.shape[a] for a in axes]))
        chunk = functools.partial(_mean_chunk_along, counts=facts.counts,
                                  sum_dtype=accumulator, **common)
        combine = functools.partial(_mean_combine_along,
                                    counts=facts.counts,
                                    sum_dtype=accumulator, reduced=reduced,
                                    dtype=result, size=size, **common)
    else:
        chunk = functools.partial(_value_chunk_along, op=op, dtype=result,
                                  requested=requested, **common)
        combine = functools.partial(_value_combine_along, op=op,
                                    dtype=result, **common)
    chunk = functools.partial(chunk, axes=axes)
    name = f"cudareduce-{op}-along-" + tokenize(x, chunk, axes)
    starts = [np.concatenate(([0], np.cumsum(c)[:-1])) for c in x.chunks]
    layer = {}
    for block in np.ndindex(*x.numblocks):
        task = chunk
        if facts.gives_index:
            # The block's start along the axis, added to its indices.
            (a,) = axes
            task = functools.partial(chunk, offset=int(starts[a][block[a]]))
        layer[(name, *block)] = (task, (x.name, *block))
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[x])
    partials = da.Array(graph, name, meta=meta, chunks=tuple(
        (1,) * len(c) if i in axes else c for i, c in enumerate(x.chunks)))
    return _tree_reduce(partials, functools.partial(combine, final=True),
                        axes, keepdims, result, split_every, combine,
                        name=f"cudareduce-{op}", concatenate=False,
                        reduced_meta=meta)
