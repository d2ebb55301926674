"""Shared test configuration: paths of bundled examples and the reference models."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED_MODELS = ROOT.parent / "shared" / "models"

# A bug of ours while compiling (an exception that is not Numba's own) fails the test instead
# of quietly sending the graph to the interpreted backend (see backends/compiled/build.STRICT).
os.environ.setdefault("MDF_ENGINE_STRICT", "1")
# the generated code is what the compiled backend's tests check: tier 0 (a first short run
# without compiling, mdf_engine/backends/vm) is switched on by its own tests (test_tier0.py)
os.environ.setdefault("MDF_ENGINE_TIER0", "0")
