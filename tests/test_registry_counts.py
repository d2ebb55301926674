"""Broken code fails loudly: every module of the package imports, and the one registry holds
every function the MDF spec (seed 004) documents, every ONNX op of the seed documents and the
253 Hexagon NN ops of the op list. A module that fails to import, or an op family that is not
registered, fails here instead of turning into skips elsewhere."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mdf_engine
from mdf_engine.plan import load_function_libraries
from mdf_engine.registry import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"


def _seeds() -> Path:
    if not SEEDS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SEEDS} is absent: the documented counts were not checked")
        pytest.skip(f"{SEEDS} is absent: the documented counts were not checked")
    return SEEDS


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(mdf_engine.__path__, "mdf_engine."))


@pytest.mark.parametrize("name", _modules())
def test_every_module_imports(name):
    importlib.import_module(name)


def test_every_function_of_the_mdf_spec_is_registered():
    """Seed 004 documents 7 standard functions, 7 ACT-R functions and 162 ``onnx::`` ops."""
    text = next(_seeds().glob("004_*.txt")).read_text(encoding="utf-8")
    names = [m.group(1).strip() for m in re.finditer(r"^## (.+)$", text, re.M)]
    names = [n for n in names if n != "All functions:"]
    assert len(names) == 176 and sum(n.startswith("onnx::") for n in names) == 162
    load_function_libraries()
    missing = [n for n in names if n not in REGISTRY]
    assert not missing, f"documented in seed 004 but not registered: {missing}"


def test_every_onnx_op_of_the_seed_documents_is_registered():
    """The early (000, 002) and modified (003) ONNX documents: 177 distinct op names."""
    spec = importlib.util.spec_from_file_location(
        "onnx_ops_table", ROOT / "tools" / "onnx_ops_table.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    ops = tool.seed_ops(_seeds())
    assert len(ops) == 177
    load_function_libraries()
    missing = [op for op in ops if not tool.registered(op)]
    assert not missing, f"documented in the ONNX seeds but not registered: {missing}"


def test_every_hexagon_op_of_the_op_list_is_registered():
    from mdf_engine import hexagon

    load_function_libraries()
    names = [n for n in REGISTRY.names() if n.startswith("hexagon::")]
    assert len(set(names)) == len(hexagon.ALL_OPS) == 253


def test_every_onnx_module_on_disk_is_a_listed_family():
    """``onnx_ops`` imports its families from one explicit list: a module on the disk that the
    list lacks (its ops would register only when something else imports it) fails here."""
    from mdf_engine import onnx_ops

    on_disk = {
        p.stem
        for p in (ROOT / "mdf_engine" / "onnx_ops").glob("*.py")
        if not p.stem.startswith("_")
    }
    assert sorted(onnx_ops.FAMILIES) == sorted(on_disk - set(onnx_ops.NOT_FAMILIES))


_KERNEL_MODULES = (
    "from mdf_engine.plan import load_function_libraries\n"
    "from mdf_engine.registry import REGISTRY\n"
    "load_function_libraries()\n"
    "print('\\n'.join(sorted({s.kernel.__module__ for n in REGISTRY.names()"
    " for s in REGISTRY.versions(n)})))\n"
)


def test_a_fresh_load_registers_every_op_module():
    """In a fresh interpreter, ``load_function_libraries()`` alone registers ops from every
    module that registers ops here, where every module of the package has been imported: a
    module that its package's list forgets registers nothing there (this process cannot tell,
    since test_every_module_imports imported everything)."""
    for name in _modules():
        importlib.import_module(name)
    here = {s.kernel.__module__ for n in REGISTRY.names() for s in REGISTRY.versions(n)}
    here = {m for m in here if m.startswith("mdf_engine.")}
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    out = subprocess.run(
        [sys.executable, "-c", _KERNEL_MODULES],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
        check=True,
    ).stdout.split()
    assert sorted(here - set(out)) == []


def test_the_compile_cache_key_covers_every_source_file():
    """A compiled record is keyed by every source file of the package, sub-packages included
    (an edited kernel module must never be served from an old cache)."""
    from mdf_engine.backends.compiled.cache import engine_sources

    root = Path(mdf_engine.__file__).parent
    names = {p.relative_to(root).as_posix() for p in engine_sources()}
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*.py")}
    assert names == on_disk
    assert {"onnx_ops/conv.py", "hexagon/quant.py", "schedulers/codegen.py"} <= names
