"""Shared test configuration: paths of bundled examples and the reference models."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED_MODELS = ROOT.parent / "shared" / "models"
