"""MDF standard functions (the spec's seven and modeci-mdf 0.4.15's additions), registered in
:data:`mdf_engine.registry.REGISTRY` and called from MDF by bare name (``linear``, ...).

Importing this package registers every module in it.
"""

from __future__ import annotations

import importlib
import pkgutil


def _load() -> None:
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_load()
