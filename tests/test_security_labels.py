"""Model text meeting other languages (issue 18): matplotlib labels of drawings and plots show
ids literally (no mathtext from ``$...$``, no control characters); CSV headers read back by
Python's csv module (the RFC 4180 oracle) as the ids, with a ``'`` before anything a
spreadsheet would run as a formula."""

from __future__ import annotations

import csv
import io
import json

import pytest

import mdf_engine
from mdf_engine.results import csv_cell
from mdf_engine.safe_text import mpl_text
from mdf_engine.viz.drawing import draw

HOSTILE = "A$\\frac{1}{0}$\x1b[31m$"


def _model() -> dict:
    return {
        "id": "m$x$",
        "graphs": [
            {
                "id": "g$^$",
                "nodes": [
                    {
                        "id": HOSTILE,
                        "parameters": [{"id": "x", "value": "x + 1", "default_initial_value": 0}],
                        "output_ports": [{"id": "o$", "value": "x"}],
                    },
                    {
                        "id": "B",
                        "input_ports": [{"id": "i$"}],
                        "parameters": [{"id": "y", "value": 1}],
                        "output_ports": [{"id": "o", "value": "y"}],
                    },
                ],
                "edges": [
                    {
                        "id": "e",
                        "sender": HOSTILE,
                        "sender_port": "o$",
                        "receiver": "B",
                        "receiver_port": "i$",
                    }
                ],
            }
        ],
    }


def test_mpl_text_escapes_mathtext_and_control_characters():
    assert mpl_text("a$b$") == "a\\$b\\$"
    assert mpl_text("x\x1b[2Jy\nz") == "x\\x1b[2Jy\nz"


def test_drawing_and_plot_of_hostile_ids(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_model()))
    draw(str(path), str(tmp_path / "d.png"))
    sim = mdf_engine.Simulation(str(path))
    res = sim.run(steps=3, record=[f"{HOSTILE}.o$"])
    from mdf_engine.viz.runs import plot_run

    plot_run(res, str(tmp_path / "p.png"), title="t$x$")
    assert (tmp_path / "d.png").stat().st_size > 0 and (tmp_path / "p.png").stat().st_size > 0


@pytest.mark.parametrize(
    "text", ["=cmd|' /C calc'!A0", "+1", "-2+3", "@SUM(A1)", "\tx", "\r=1", 'a,"b"\nc', "plain"]
)
def test_csv_cells_read_back_as_text(text):
    cell = csv_cell(text)
    back = next(csv.reader(io.StringIO(cell + "\n")))
    assert len(back) == 1
    if text[:1] in "=+-@\t\r":
        assert back[0] == "'" + text
    else:
        assert back[0] == text
