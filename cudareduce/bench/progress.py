"""The progress bar of a run that times many (size, method) pairs."""
from __future__ import annotations

import sys
import warnings

__all__ = ["Progress"]


class Progress:
    """A progress bar: ``tqdm.auto`` when tqdm is importable (a widget in
    Jupyter when ipywidgets is installed, else text on stderr), else a plain
    ``\\r`` counter on stderr.

    Parameters
    ----------
    total : int
        The steps the run takes.
    enabled : bool
        False shows nothing (the steps are still counted).
    """

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.bar = None
        if enabled:
            try:
                with warnings.catch_warnings():
                    # tqdm.auto warns in a notebook without ipywidgets, and
                    # then falls back to its text bar: fine here.
                    warnings.simplefilter("ignore")
                    from tqdm.auto import tqdm  # noqa: PLC0415
            except ImportError:
                pass
            else:
                self.bar = tqdm(total=total, unit="run", file=sys.stderr,
                                leave=False, dynamic_ncols=True)

    def step(self, label: str) -> None:
        """One step done; `label` says which."""
        self.done += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(label, refresh=False)
            self.bar.update(1)
        else:
            sys.stderr.write(f"\r{self.done}/{self.total} {label}"[:79]
                             .ljust(79))
            sys.stderr.flush()

    def close(self) -> None:
        """Take the bar off the screen."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.close()
        else:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()
