"""cudareduce.bench.progress: tqdm.auto's bar, else a plain counter."""
from __future__ import annotations

import sys

from support.bench_data import fake_device  # noqa: F401
from cudareduce.bench import ladder, progress


def test_progress_is_tqdm_auto():
    """tqdm.auto: the notebook widget inside Jupyter, text elsewhere."""
    try:
        import tqdm.auto as tqdm_auto
    except ImportError:
        tqdm_auto = None
    bar = progress.Progress(3, enabled=True)
    try:
        if tqdm_auto is None:
            assert bar.bar is None          # the plain counter
        else:
            assert isinstance(bar.bar, tqdm_auto.tqdm)
    finally:
        bar.close()
    assert progress.Progress(3, enabled=False).bar is None


def test_progress_fallback_without_tqdm(fake_device, monkeypatch, capsys):
    # import fails (tqdm.auto too, even when an earlier test imported it)
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    ladder.run(methods=["sequential"], sizes=[1 << 10, 1 << 11], peers=False)
    err = capsys.readouterr().err
    assert "\r1/2 n=2^10 sequential" in err and "\r2/2 n=2^11 sequential" in err
