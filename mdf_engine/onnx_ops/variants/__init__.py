"""The early, experimental and modified ONNX operator forms, as thin adapters over the family
kernels of :mod:`mdf_engine.onnx_ops`.

* ``onnx-legacy`` (opsets 1-6, seeds 000/002): :mod:`.legacy` declares and registers them; the
  ``legacy_*`` modules hold one family each (arithmetic, activations, shape, nn, recurrent) and
  translate the early arguments (attributes -> inputs, the limited broadcast -> a reshape, the
  seed's RNN input order -> the kernel's) before calling the family kernel;
* ``onnx-exp`` (seed 002's experimental ops, called ``onnx::Op``): :mod:`.experimental`;
* ``onnx-mod`` (seed 003's modified ops, called ``onnx_mod::Op``): :mod:`.modified`.

Loading is explicit: :func:`load`, which ``mdf_engine.onnx_ops`` calls once after importing every
standard family module, imports :data:`MODULES` in order and then registers the legacy forms, so
the registry's resolution does not depend on which module was imported first.
"""

from __future__ import annotations

import importlib

from . import legacy

#: The variant modules, imported in this order by :func:`load`.
MODULES = (
    "legacy_arith",
    "legacy_activations",
    "legacy_shape",
    "legacy_nn",
    "legacy_recurrent",
    "experimental",
    "modified",
)


def load() -> None:
    """Import every variant module and register the legacy forms (idempotent). The standard
    ``onnx`` family modules must already be imported: the legacy registration checks them."""
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
    legacy.register_all()
