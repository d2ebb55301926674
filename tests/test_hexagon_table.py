"""The registry holds every op of the Hexagon NN op list, and docs/hexagon_ops_table.md is current."""

import importlib.util
from pathlib import Path

import pytest

import mdf_engine.hexagon as hx
from mdf_engine.registry import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seeds" / "001_1caeed201cb01286.txt"


def _tool():
    spec = importlib.util.spec_from_file_location(
        "hexagon_ops_table", ROOT / "tools" / "hexagon_ops_table.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_document_op_is_registered():
    assert len(hx.ALL_OPS) == 253 == len(set(hx.ALL_OPS))
    assert sorted(hx.names()) == sorted(hx.ALL_OPS)
    assert len(hx.d32_OPS) == 28
    status = [hx.op_status(o) for o in hx.ALL_OPS]
    core = [s for s in status if s["tier"] in ("1", "2")]
    assert len(core) == 60 and all(s["status"] == "implemented" for s in core)
    d32 = [s for s in status if s["tier"] == "d32"]
    assert sum(s["status"] == "mapped" for s in d32) == 26  # the 2 PPrint d32 log like PPrint_8
    assert {s["status"] for s in status} == {"implemented", "mapped"}


def test_registry_holds_exactly_the_documented_ops():
    """Every family module imported and registered its ops: the hexagon namespace holds the
    253 documented names, none of them a by-name placeholder."""
    names = REGISTRY.names("hexagon")
    assert len(names) == 253
    assert not [n for n in names if REGISTRY.lookup(n).extra.get("unsupported")]


@pytest.mark.skipif(not SEED.exists(), reason="seed document not available")
def test_names_match_seed_and_table_is_current(tmp_path):
    tool = _tool()
    assert tuple(tool.op_names(SEED.read_text())) == hx.ALL_OPS
    out = tmp_path / "t.md"
    tool.main([str(SEED), str(out)])
    assert out.read_text() == (ROOT / "docs" / "hexagon_ops_table.md").read_text()
