"""Execute ``benchmarks/step_speedups.ipynb`` headless, as CI and the GPU
check do (``tests/bench/test_notebook.py``), and optionally keep its outputs.

From the repository root::

    python benchmarks/run_notebook.py                 # live: time this GPU
    python benchmarks/run_notebook.py --recorded docs/figures/ladder.json
    python benchmarks/run_notebook.py --inplace       # store the outputs in the notebook
    python benchmarks/run_notebook.py -o run.ipynb    # ... or in another file

The stored outputs replay the committed recording, but for the cells that
depend on the GPU (:func:`depends_on_the_gpu`: the probe and the live sums,
run on the recording's GPU).  To refresh them on a machine without one::

    python benchmarks/run_notebook.py --recorded docs/figures/ladder.json --inplace --keep-live

Without ``--recorded`` the notebook decides for itself: it times the GPU when
a one-element ``cudareduce.sum`` works, else it replays the committed
results.  ``--recorded PATH`` sets ``CUDAREDUCE_NOTEBOOK_RECORDED=PATH`` for
the kernel: replay `PATH`, time nothing, skip the live sums.

The kernel is this interpreter (``sys.executable -m ipykernel_launcher``),
through a kernel spec written to a temporary folder, so no ``jupyter
kernelspec install`` is needed and no other environment's ``python3``
kernel is picked up by mistake.  It runs with the notebook's folder as its
working directory and imports the same ``cudareduce`` as this process.
Needs ``nbclient``, ``nbformat`` and ``ipykernel`` (the ``test`` extra);
:func:`run_as_script` runs the code cells in order without them.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

NOTEBOOK = Path(__file__).resolve().with_name("step_speedups.ipynb")
RECORDED_ENV = "CUDAREDUCE_NOTEBOOK_RECORDED"
KERNEL_NAME = "cudareduce-notebook-python"
CELL_TIMEOUT = 600          # seconds; the live sweep takes about 30 s on an H100


def depends_on_the_gpu(source: str) -> bool:
    """Whether a code cell's output depends on the machine's GPU: it reads
    ``GPU``, the first cell's verdict (the probe itself and the live
    sums).  The other cells' outputs are the recording's, wherever the
    notebook replays it."""
    return re.search(r"\bGPU\b", source) is not None


def _package_root() -> str:
    """The folder that holds the ``cudareduce`` this process imports."""
    import cudareduce  # noqa: PLC0415
    return str(Path(cudareduce.__file__).resolve().parent.parent)


def _recorded_path(recorded: str | os.PathLike, notebook_dir: Path) -> str:
    """`recorded` as the notebook's cells will see it: relative to the
    notebook's folder where possible (so that stored outputs show no local
    paths), else absolute."""
    path = Path(recorded).resolve()
    try:
        return os.path.relpath(path, notebook_dir)
    except ValueError:          # another drive (Windows)
        return str(path)


def kernel_env(recorded: str | os.PathLike | None,
               notebook_dir: str | os.PathLike = NOTEBOOK.parent
               ) -> dict[str, str]:
    """This process's environment for the kernel: the recorded-results
    variable set (or removed when `recorded` is None), and PYTHONPATH led by
    the folder of this process's ``cudareduce``."""
    env = dict(os.environ)
    if recorded is None:
        env.pop(RECORDED_ENV, None)
    else:
        env[RECORDED_ENV] = _recorded_path(recorded, Path(notebook_dir))
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([_package_root()] + paths)
    return env


@contextlib.contextmanager
def _kernel_manager() -> Iterator[Any]:
    """A kernel manager whose only kernel spec is this interpreter's."""
    from jupyter_client.kernelspec import KernelSpecManager  # noqa: PLC0415
    from jupyter_client.manager import AsyncKernelManager  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="cudareduce-kernel-") as tmp:
        spec_dir = Path(tmp) / KERNEL_NAME
        spec_dir.mkdir()
        (spec_dir / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher",
                     "-f", "{connection_file}"],
            "display_name": f"Python ({sys.executable})",
            "language": "python",
            "metadata": {"debugger": False},
        }), encoding="utf-8")
        specs = KernelSpecManager(kernel_dirs=[tmp], ensure_native_kernel=False)
        yield AsyncKernelManager(kernel_name=KERNEL_NAME,
                                 kernel_spec_manager=specs)


def execute(path: str | os.PathLike = NOTEBOOK, *,
            recorded: str | os.PathLike | None = None,
            timeout: int = CELL_TIMEOUT) -> Any:
    """Run every cell of the notebook at `path` with nbclient; returns the
    executed ``nbformat.NotebookNode`` (the file is not changed).

    Raises
    ------
    nbclient.exceptions.CellExecutionError
        A cell raised; the message holds the cell and its traceback.
    ImportError
        nbclient, nbformat or ipykernel is missing.
    """
    import ipykernel  # noqa: F401, PLC0415 - fail early and clearly
    import nbclient  # noqa: PLC0415
    import nbformat  # noqa: PLC0415

    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    with _kernel_manager() as km:
        client = nbclient.NotebookClient(
            nb, km=km, timeout=timeout, allow_errors=False, record_timing=False,
            resources={"metadata": {"path": str(path.parent)}})
        client.execute(env=kernel_env(recorded, path.parent))
    # The kernel spec was temporary: record the usual one, as Jupyter would.
    nb.metadata["kernelspec"] = {"display_name": "Python 3",
                                 "language": "python", "name": "python3"}
    return nb


def run_as_script(path: str | os.PathLike = NOTEBOOK, *,
                  recorded: str | os.PathLike | None = None) -> str:
    """Run the notebook's code cells in order in one namespace, in this
    process (no Jupyter needed); returns what they printed.

    For machines without nbclient: the cells print what they show, except
    the value of a cell's last expression, which a notebook would display.
    """
    path = Path(path).resolve()
    with open(path, encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    namespace: dict[str, Any] = {"__name__": "__main__",
                                 "display": lambda *objs: print(*objs)}
    saved_env = os.environ.get(RECORDED_ENV)
    saved_cwd = os.getcwd()
    out = io.StringIO()
    try:
        if recorded is None:
            os.environ.pop(RECORDED_ENV, None)
        else:
            os.environ[RECORDED_ENV] = _recorded_path(recorded, path.parent)
        os.chdir(path.parent)
        with contextlib.redirect_stdout(out):
            for i, cell in enumerate(cells):
                if cell["cell_type"] != "code":
                    continue
                source = "".join(cell["source"])
                exec(compile(source, f"{path.name}[cell {i}]", "exec"),
                     namespace)
    finally:
        os.chdir(saved_cwd)
        if saved_env is None:
            os.environ.pop(RECORDED_ENV, None)
        else:
            os.environ[RECORDED_ENV] = saved_env
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/run_notebook.py",
        description="Execute the example notebook headless (nbclient).")
    parser.add_argument("notebook", nargs="?", default=str(NOTEBOOK))
    parser.add_argument("--recorded", metavar="JSON",
                        help="replay this results file instead of timing")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--inplace", action="store_true",
                       help="write the outputs into the notebook itself")
    where.add_argument("-o", "--output", metavar="PATH",
                       help="write the executed notebook to PATH")
    parser.add_argument("--keep-live", action="store_true",
                        help="keep the stored outputs of the cells that "
                             "depend on the GPU (the live sums)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT,
                        help="seconds per cell (default %(default)s)")
    args = parser.parse_args(argv)

    import nbformat  # noqa: PLC0415
    nb = execute(args.notebook, recorded=args.recorded, timeout=args.timeout)
    if args.keep_live:      # and the metadata of the kernel that ran them
        stored = nbformat.read(args.notebook, as_version=4)
        nb.metadata = stored.metadata
        for cell, old in zip(nb.cells, stored.cells):
            if cell.cell_type == "code" and depends_on_the_gpu(cell.source):
                cell.outputs = old.outputs
    target = args.notebook if args.inplace else args.output
    if target:
        nbformat.write(nb, target)
        print(f"run_notebook: wrote {target}", file=sys.stderr)
    else:
        print("run_notebook: every cell ran (use --inplace or -o to keep "
              "the outputs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
