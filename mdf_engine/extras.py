"""Optional dependencies and the pip extra that installs each.

The core install (``pip install mdf-engine``) loads, checks, runs and draws nothing it cannot
do with numpy, Numba, PyYAML, networkx and graph-scheduler. Sweeps, plots, ONNX and the
modeci-mdf oracle are extras; :func:`require` imports one or raises a one-line
:class:`MissingExtra` (an :class:`~mdf_engine.errors.MDFError`) naming the extra to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MDFError

#: top-level module -> (pip extra, what it is for)
EXTRAS: dict[str, tuple[str, str]] = {
    "xarray": ("sweep", "sweeps"),
    "dask": ("sweep", "sweeps on a Dask cluster"),
    "distributed": ("sweep", "sweeps on a Dask cluster"),
    "matplotlib": ("plot", "plots and drawings"),
    "onnx": ("onnx", "ONNX export and import"),
    "onnxruntime": ("onnx", "running ONNX files"),
    "pandas": ("dataframe", "Results.to_dataframe"),
    "modeci_mdf": ("modeci", "modeci-mdf objects"),
}


class MissingExtra(MDFError):
    """An optional package that is not installed (the message names its pip extra)."""


def missing_message(module: str | None) -> str | None:
    """The one-line advice for a missing optional module, or None if it is not optional."""
    top = (module or "").split(".")[0]
    if top not in EXTRAS:
        return None
    extra, purpose = EXTRAS[top]
    return (
        f"{purpose} need the '{top}' package, which is not installed: "
        f"pip install 'mdf-engine[{extra}]' (in a clone: pip install -e '.[{extra}]')"
    )


def require(module: str) -> ModuleType:
    """Import ``module`` (an optional dependency) or raise an MDFError naming its extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        text = missing_message(exc.name)
        if text is None or not module.startswith(exc.name or "\0"):
            raise
        raise MissingExtra(text) from None
