"""cudareduce: the parallel-reduction ladder on the GPU, behind a NumPy-like API.

Each step of Mark Harris's "Optimizing Parallel Reduction in CUDA" is a
method of every reduction -- :func:`sum`, :func:`prod`, :func:`mean`,
:func:`min`, :func:`max`, :func:`any`, :func:`all`, :func:`argmin`,
:func:`argmax` and the NaN-skipping :func:`nansum`, :func:`nanprod`,
:func:`nanmin`, :func:`nanmax`, :func:`nanmean`, :func:`nanargmin`,
:func:`nanargmax` --
selectable by name (see :func:`methods`).

Inputs are tried in this order: a ``numpy.ndarray`` is host memory (it never
goes through a GPU protocol); then ``__cuda_array_interface__`` (CuPy,
Numba, PyTorch CUDA tensors); then DLPack (``__dlpack__`` and
``__dlpack_device__``: JAX, PyTorch; CPU tensors take the host path); then
anything ``numpy.asarray`` accepts.

Without its compiled extension (a source checkout that was not built),
``import cudareduce`` works -- the bench's results documents are read,
checked and plotted without it (:mod:`cudareduce.bench.schema`) -- and
each of these names raises an ImportError that says where the extension
is missing.
"""
from __future__ import annotations

__version__ = "0.1.0"

#: The public names: these, and where the compiled extension is there a
#: function of each operator of its rows (``sum`` ... ``nanargmax``:
#: ``_cudareduce.OPERATORS``), added below.  Without it the operators are
#: not known, so these alone, each of which then raises the ImportError
#: that says why (``from cudareduce import *`` included).
__all__ = ["CudaError", "Pass", "__version__", "block_sizes", "methods",
           "plan"]

try:
    from . import _cudareduce
except ImportError:
    # The source folder (python run from the repository root after a
    # non-editable install, or a checkout that was not built) holds no
    # compiled extension, and Python speaks of a circular import.  The
    # import works, for the bench's document model needs no more
    # (cudareduce.bench.schema, .results, .plot), and each of the
    # library's names says what is missing.  An extension that is there
    # but fails to load keeps its own error.
    import glob as _glob
    import os as _os
    from importlib.util import find_spec as _find_spec
    if _glob.glob(_os.path.join(_os.path.dirname(__file__), "_cudareduce*")):
        raise
    _MISSING = (
        f"cudareduce's compiled extension is not in "
        f"{_os.path.dirname(__file__)}: that is the source folder, imported "
        f"because Python was started from the repository root.  Run from "
        f"another directory to use the installed package, or install in "
        f"editable mode (python -m pip install -e .), which builds the "
        f"extension into the source folder.")

    def __getattr__(name: str) -> object:
        """Without the compiled extension: the ImportError that says so,
        for the extension itself and every public name but a subpackage's
        (which imports as ever); AttributeError for the others."""
        if name == "_cudareduce" or name.isidentifier() and \
                not name.startswith("_") and \
                _find_spec(f"{__name__}.{name}") is None:
            raise ImportError(_MISSING, name=f"{__name__}._cudareduce")
        raise AttributeError(f"module {__name__!r} has no attribute "
                             f"{name!r}")
else:
    from ._cudareduce import CudaError
    from ._library import *  # noqa: F403 - a function of each operator
    from ._library import (DEFAULT_METHOD, DEFAULT_THREADS, Pass,
                           block_sizes, methods, plan)
    __all__ += _cudareduce.OPERATORS


def __dir__() -> list[str]:
    # The public API, not the names this module imports for itself.
    return sorted(__all__)
