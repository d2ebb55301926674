"""The generated module of a graph is the same text in every process: the compile cache and
Numba's own cache key on it, so text that changed with Python's hash seed (set iteration order)
would make every new process compile again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import hashlib, sys
import mdf_engine.backends.compiled.build as b
from mdf_engine import Simulation
from mdf_engine.loader import load
seen = []
orig = b.load_generated
def spy(source, table):
    seen.append(source)
    return orig(source, table)
b.load_generated = spy
for f in sys.argv[1:]:
    Simulation(load(f), backend="compiled").run(steps=2)
print(hashlib.sha1("".join(seen).encode()).hexdigest(), len(seen))
"""


def _digest(seed: int, cache: Path) -> str:
    env = dict(os.environ, PYTHONHASHSEED=str(seed), MDF_ENGINE_CACHE=str(cache))
    files = [str(ROOT / "examples" / f) for f in ("iaf_network.json", "weighted_reduce.json")]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *files],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()[-2:]


def test_generated_source_does_not_depend_on_the_hash_seed(tmp_path):
    first = _digest(1, tmp_path / "a")
    second = _digest(2, tmp_path / "b")
    assert first[1] == "2", "both models must be generated (no cache hit)"
    assert first == second
