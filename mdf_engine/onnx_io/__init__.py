"""ONNX interchange: export a stateless MDF graph as an ONNX model, import an ONNX model as an
MDF model whose nodes call ``onnx::`` functions, and run an ONNX file in our engine.

Public calls::

    export(model, path, graph=None)        -> onnx.ModelProto (also written to path)
    to_onnx(model, graph=None)             -> onnx.ModelProto
    import_model(path_or_proto)            -> mdf_engine.model.Model
    run_onnx(path_or_proto, feeds)         -> {ONNX output name: array}

The name mapping in both directions is described in docs/onnx_io.md.
"""

from __future__ import annotations

from .exporter import export, to_onnx
from .importer import import_model, portable, run_onnx

__all__ = ["export", "to_onnx", "import_model", "run_onnx", "portable"]
