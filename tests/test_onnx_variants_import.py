"""The early, experimental and modified ONNX forms (``mdf_engine.onnx_ops.variants``) are loaded
explicitly, so the registry resolves every ``onnx::``/``onnx_mod::`` name the same way whichever
module a program imports first.

The oracle is the registry of a process that imported the whole ``mdf_engine.onnx_ops`` package:
each variant module (and a family module that the variants adapt) is imported *on its own* in a
fresh interpreter, and the registry resolution there must be identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mdf_engine.onnx_ops import variants
from mdf_engine.onnx_ops.variants import legacy

ROOT = Path(__file__).resolve().parent.parent

#: Prints, as JSON, every version of every ONNX-style name (namespace, since, inputs, attribute
#: names), the version picked at each opset 1..22, and the shadowed legacy forms.
_DUMP = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
from mdf_engine.registry import REGISTRY
from mdf_engine.onnx_ops.variants import legacy
out = {}
for name in REGISTRY.names():
    vs = REGISTRY.versions(name)
    if not any(v.namespace.startswith("onnx") for v in vs):
        continue
    picks = []
    for opset in range(1, 23):
        usable = [v for v in vs if v.since <= opset]
        p = REGISTRY.lookup(name, opset) if usable else None
        picks.append(None if p is None else [p.namespace, p.since])
    out[name] = {"versions": [[v.namespace, v.since, list(v.inputs), list(v.attributes)]
                              for v in vs], "picks": picks}
out["(shadowed)"] = sorted(map(list, legacy.SHADOWED))
print(json.dumps(out, sort_keys=True))
"""


def _resolution_after_importing(module: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run(
        [sys.executable, "-c", _DUMP, module],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def everything() -> dict:
    return _resolution_after_importing("mdf_engine.onnx_ops")


@pytest.mark.parametrize(
    "module",
    [f"mdf_engine.onnx_ops.variants.{m}" for m in variants.MODULES]
    + ["mdf_engine.onnx_ops.variants", "mdf_engine.onnx_ops.lstm"],
)
def test_resolution_does_not_depend_on_the_first_import(module, everything):
    alone = _resolution_after_importing(module)
    assert sorted(alone) == sorted(everything)
    differ = [name for name in everything if alone[name] != everything[name]]
    assert not differ, f"importing {module} first changes the resolution of {differ[:5]}"


def test_every_variant_namespace_is_loaded(everything):
    namespaces = {
        v[0] for entry in everything.values() if isinstance(entry, dict) for v in entry["versions"]
    }
    assert {"onnx-legacy", "onnx-exp", "onnx-mod"} <= namespaces
    # every declared legacy form is either registered or listed as shadowed, never both
    registered = {
        (name.split("::", 1)[1], v[1])
        for name, entry in everything.items()
        if isinstance(entry, dict)
        for v in entry["versions"]
        if v[0] == "onnx-legacy"
    }
    shadowed = {tuple(s) for s in everything["(shadowed)"]}
    assert registered.isdisjoint(shadowed)
    assert registered | shadowed == set(legacy.SCHEMAS)


def test_declaring_a_legacy_form_after_loading_fails_loudly():
    with pytest.raises(RuntimeError, match="MODULES"):
        legacy.legacy_op("LateOp")(lambda X: (X,))
