"""Plots of runs and sweeps (mdf_engine.viz) and progress bars (mdf_engine.progress): each
plot is rendered and checked to be a non-empty image of the expected size, labels (with units)
are read back from SVG text, and the progress bar is a no-op off a terminal."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from mdf_engine import Simulation
from mdf_engine.errors import MDFError
from mdf_engine.model import Graph, Model, Node, OutputPort, Parameter
from mdf_engine.progress import Progress, progress

pytest.importorskip("matplotlib")
xr = pytest.importorskip("xarray")

from matplotlib.image import imread  # noqa: E402

from mdf_engine.viz.figures import model_units  # noqa: E402
from mdf_engine.viz.runs import plot_run  # noqa: E402
from mdf_engine.viz.sweep_table import as_table, select_values  # noqa: E402
from mdf_engine.viz.sweeps import plot_sweep  # noqa: E402


def _decay_model() -> Model:
    """dV/dt = -V / tau with units in metadata, and a counter without units."""
    cell = Node(
        id="cell",
        parameters=[
            Parameter(id="tau", value=2.0, metadata={"units": "ms"}),
            Parameter(
                id="V",
                time_derivative="-V / tau",
                default_initial_value=1.0,
                metadata={"units": "mV"},
            ),
        ],
        output_ports=[
            OutputPort(id="V_out", value="V", metadata={"units": "mV"}),
            OutputPort(id="twice", value="2 * V"),
        ],
    )
    counter = Node(
        id="counter",
        parameters=[Parameter(id="n", value="n + 1", default_initial_value=0)],
        output_ports=[OutputPort(id="count", value="n")],
    )
    return Model(
        id="decay", graphs=[Graph(id="g", nodes=[cell, counter], metadata={"time_units": "ms"})]
    )


def _png_shape(path) -> tuple[int, int]:
    img = imread(str(path))
    assert img.ndim == 3 and img.shape[2] in (3, 4)
    assert np.ptp(img[..., :3]) > 0, "the image is blank"
    return img.shape[0], img.shape[1]


def _svg(path) -> tuple[str, str, str]:
    root = ET.parse(str(path)).getroot()
    text = " ".join(t for el in root.iter() if el.tag.endswith("text") for t in el.itertext())
    return root.attrib["width"], root.attrib["height"], text


@pytest.fixture(scope="module")
def run_results():
    sim = Simulation(_decay_model())
    return sim.run(steps=30, dt=0.1, record=["cell.V_out", "cell.twice", "counter.count"])


# -- runs ------------------------------------------------------------------------------------
def test_plot_run_png_has_requested_size(tmp_path, run_results):
    out = tmp_path / "run.png"
    assert plot_run(run_results, out, size=(6, 4), dpi=50) == (300, 200)
    assert _png_shape(out) == (200, 300)


def test_plot_run_default_size_grows_with_nodes(tmp_path, run_results):
    out = tmp_path / "sub" / "run.png"
    w, h = plot_run(run_results, out, dpi=40)
    assert _png_shape(out) == (h, w)
    assert (w, h) == (round(8 * 40), round((2.4 * 2 + 0.8) * 40))  # two nodes, two panels


def test_plot_run_svg_labels_units_from_model(tmp_path, run_results):
    out = tmp_path / "run.svg"
    plot_run(run_results, out, model=_decay_model(), size=(7, 5), title="decay run")
    width, height, text = _svg(out)
    assert (width, height) == ("504pt", "360pt")
    for label in ("time (ms)", "V_out (mV)", "twice", "count", "cell", "counter", "decay run"):
        assert label in text


def test_plot_run_without_dt_uses_steps(tmp_path):
    res = Simulation(_decay_model()).run(steps=5, record=["counter.count"])
    out = tmp_path / "steps.svg"
    plot_run(res, out, units={"counter.count": "calls"})
    _, _, text = _svg(out)
    assert "step" in text and "count (calls)" in text and "time" not in text


def test_plot_run_errors(tmp_path, run_results):
    empty = Simulation(_decay_model()).run(steps=2)
    with pytest.raises(MDFError, match="nothing was recorded"):
        plot_run(empty, tmp_path / "x.png")
    with pytest.raises(MDFError, match=r"\.png, \.svg, \.pdf"):
        plot_run(run_results, tmp_path / "x.gif")
    assert not (tmp_path / "x.gif").exists()


def test_model_units():
    units = model_units(_decay_model())
    assert units == {"time": "ms", "cell.tau": "ms", "cell.V": "mV", "cell.V_out": "mV"}


# -- sweeps ----------------------------------------------------------------------------------
def _grid_dataset() -> xr.Dataset:
    """Two swept parameters and a time axis, values from a closed formula."""
    a = np.linspace(0.5, 2.0, 7)
    b = np.array([1.0, 2.0, 4.0, 8.0])
    t = np.arange(6) * 0.5
    v = np.exp(-t[None, None, :] / a[:, None, None]) * b[None, :, None]
    ds = xr.Dataset(
        {
            "cell.V_out": (("cell.tau", "cell.V0", "time"), v),
            "cell.peak": (("cell.tau", "cell.V0"), v.max(axis=2)),
        },
        coords={"cell.tau": a, "cell.V0": b, "time": t},
    )
    ds["cell.tau"].attrs["units"] = "ms"
    ds["cell.V_out"].attrs["units"] = "mV"
    return ds


def test_select_takes_final_time_and_nearest_value():
    ds = _grid_dataset()
    t = as_table(ds, None)
    dims, vals, reduced = select_values(t, "cell.V_out", {"cell.V0": 3.9})
    assert reduced and dims == ["cell.tau"]
    a = ds["cell.tau"].values
    np.testing.assert_allclose(vals, np.exp(-2.5 / a) * 4.0)


def test_plot_sweep_one_parameter_line(tmp_path):
    ds = _grid_dataset().isel({"cell.V0": 0})
    out = tmp_path / "line.png"
    assert plot_sweep(ds, out, var="cell.V_out", size=(5, 3), dpi=60) == (300, 180)
    assert _png_shape(out) == (180, 300)
    svg = tmp_path / "line.svg"
    plot_sweep(ds, svg, var="cell.V_out")
    _, _, text = _svg(svg)
    assert "cell.tau (ms)" in text and "cell.V_out (mV)" in text and "final value" in text


def test_plot_sweep_two_parameters_heat_map(tmp_path):
    ds = _grid_dataset()
    out = tmp_path / "heat.png"
    assert plot_sweep(ds, out, size=(6, 8), dpi=40) == (240, 320)
    assert _png_shape(out) == (320, 240)
    svg = tmp_path / "heat.svg"
    plot_sweep(ds, svg, x="cell.V0", y="cell.tau", var="cell.peak")
    _, _, text = _svg(svg)
    # axes as asked, and a colour bar labelled with the variable
    assert "cell.V0" in text and "cell.tau (ms)" in text and "cell.peak" in text


def test_plot_sweep_family_of_lines_and_plain_arrays(tmp_path):
    ds = _grid_dataset()
    out = tmp_path / "family.svg"
    plot_sweep(ds, out, x="cell.tau", var="cell.V_out")
    _, _, text = _svg(out)
    assert "cell.V0 = 8" in text and "cell.V0 = 1" in text
    arrays = {"cell.V_out": ds["cell.V_out"].values}
    coords = {"cell.tau": ds["cell.tau"].values, "cell.V0": ds["cell.V0"].values}
    png = tmp_path / "plain.png"
    w, h = plot_sweep(arrays, png, coords=coords, dpi=30)
    assert _png_shape(png) == (h, w)


def test_plot_sweep_random_design_scatter(tmp_path):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0, 1, 40), rng.uniform(1, 2, 40)
    ds = xr.Dataset(
        {"n.out": (("sample",), a * b)},
        coords={"sample": np.arange(40), "n.a": ("sample", a), "n.b": ("sample", b)},
    )
    out = tmp_path / "scatter.png"
    assert plot_sweep(ds, out, size=(4, 4), dpi=50) == (200, 200)
    assert _png_shape(out) == (200, 200)
    svg = tmp_path / "scatter1.svg"
    plot_sweep(ds, svg, x="n.b")
    _, _, text = _svg(svg)
    assert "n.b" in text and "n.out" in text


def test_plot_sweep_errors(tmp_path):
    ds = _grid_dataset()
    three = ds.expand_dims({"cell.gain": [1.0, 2.0]})
    with pytest.raises(MDFError, match="sel="):  # 3 dimensions, only x chosen
        plot_sweep(three, tmp_path / "x.png", x="cell.tau", var="cell.peak")
    # with nothing chosen, three swept parameters give facets of heat maps (issue 24)
    w, h = plot_sweep(three, tmp_path / "facets.png", var="cell.peak")
    assert _png_shape(tmp_path / "facets.png") == (h, w) and w > h
    w, h = plot_sweep(three, tmp_path / "ok.png", var="cell.peak", sel={"cell.gain": 2.0})
    assert _png_shape(tmp_path / "ok.png") == (h, w)
    with pytest.raises(MDFError, match="not a variable"):
        plot_sweep(ds, tmp_path / "x.png", var="cell.nope")
    with pytest.raises(MDFError, match="not a swept dimension"):
        plot_sweep(ds, tmp_path / "x.png", x="cell.nope", var="cell.peak")
    with pytest.raises(MDFError, match="coords="):
        plot_sweep({"a.b": np.zeros(3)}, tmp_path / "x.png")


# -- progress --------------------------------------------------------------------------------
class _FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_counting_no_op_off_a_terminal():
    stream = io.StringIO()
    with progress(10, True, stream=stream) as bar:
        for _ in range(10):
            bar.update(1)
    assert isinstance(bar, Progress) and not bar.shown and bar.n == 10
    assert stream.getvalue() == ""


def test_progress_disabled_on_a_terminal_writes_nothing():
    stream = _FakeTTY()
    with progress(4, False, stream=stream) as bar:
        bar.update(4)
    assert not bar.shown and bar.n == 4 and stream.getvalue() == ""


def test_progress_bar_on_a_terminal():
    pytest.importorskip("tqdm")
    stream = _FakeTTY()
    with progress(5, True, stream=stream, desc="sweep") as bar:
        assert bar.shown
        bar.update(2)
        bar.update(3)
    assert bar.n == 5 and not bar.shown
    assert "5/5" in stream.getvalue() and "sweep" in stream.getvalue()
