"""Build the API reference (HTML) from the docstrings with pdoc, offline.

    python docs/api_build.py [OUT_DIR]      # default: docs/api

``tests/test_first_day_docs.py`` builds it on every test run, so a docstring that pdoc cannot
render fails the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The public modules, in the order of the README's layout table.
MODULES = [
    "mdf_engine",
    "mdf_engine.simulation",
    "mdf_engine.results",
    "mdf_engine.sweep",
    "mdf_engine.loader",
    "mdf_engine.model",
    "mdf_engine.viz",
    "mdf_engine.onnx_io",
    "mdf_engine.compat",
    "mdf_engine.registry",
    "mdf_engine.randomness",
    "mdf_engine.summary",
    "mdf_engine.extras",
    "mdf_engine.errors",
]


def build(out: str | Path) -> list[Path]:
    """Write the reference into ``out``; returns the HTML files written."""
    import pdoc

    out = Path(out)
    pdoc.render.configure(docformat="markdown", search=False, show_source=False)
    pdoc.pdoc(*MODULES, output_directory=out)
    return sorted(out.rglob("*.html"))


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).with_name("api"))
    pages = build(target)
    print(f"{target}: {len(pages)} pages")
