"""Real networks through ``mdf import`` then ``mdf run``, and the sidecar weights file's defences.

SqueezeNet 1.1 (1.2 M weights) and ResNet-18 (11.7 M weights), built with ``onnx.helper`` and
seeded random weights (tests/onnx_nets.py), are imported with the CLI (weights go to the
``.weights.npz`` sidecar beside the JSON), run with the CLI, and the written result equals
onnxruntime's output on the same ONNX model (the oracle). The hostile-file tests hand the
loader sidecars and references an attacker could write; each must end in one MDFError.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx_nets import resnet18, squeezenet11  # noqa: E402

import mdf_engine  # noqa: E402
from mdf_engine import sidecar  # noqa: E402
from mdf_engine.cli import main  # noqa: E402
from mdf_engine.errors import MDFError  # noqa: E402


def _ort(mp, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sess = ort.InferenceSession(mp.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return sess.run(None, {"input": x})[0]


@pytest.mark.parametrize(
    "build,size", [(squeezenet11, 224), (resnet18, 112)], ids=["squeezenet1_1", "resnet18"]
)
def test_mdf_import_then_mdf_run_equals_onnxruntime(tmp_path, build, size):
    mp = build(seed=3, size=size)
    onnx.save(mp, str(tmp_path / "net.onnx"))
    x = np.random.default_rng(4).standard_normal((1, 3, size, size)).astype(np.float32)
    np.savez(tmp_path / "feeds.npz", input=x)
    out = str(tmp_path / "net.json")
    assert (
        main(["import", str(tmp_path / "net.onnx"), out, "--inputs", str(tmp_path / "feeds.npz")])
        == 0
    )
    # the structure is in the JSON, the weights beside it
    assert os.path.getsize(out) < 2 * 1024 * 1024
    assert (tmp_path / "net.weights.npz").exists()
    assert (
        main(["run", out, "--backend", "interpreted", "--quiet", "-o", str(tmp_path / "res.npz")])
        == 0
    )
    model = mdf_engine.load(out)
    port = model.metadata["onnx"]["outputs"][mp.graph.output[0].name]
    got = np.load(tmp_path / "res.npz")[f"final:{port}"]
    expected = _ort(mp, x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * scale)


# -- the sidecar's defences -------------------------------------------------------------------


def _write_model(
    folder, weights_file="m.weights.npz", ref="a0", field="value", extra_meta=None
) -> str:
    """A one-node model whose parameter ``w`` (or input port default) is read from the sidecar."""
    meta = {"sidecar": {field: ref}}
    node = {"parameters": {"w": {"metadata": meta}}, "output_ports": {"out": {"value": "w"}}}
    if field == "default_value":
        node = {"input_ports": {"x": {"metadata": meta}}, "output_ports": {"out": {"value": "x"}}}
    body = {"format": "ModECI MDF v0.4", "graphs": {"g": {"nodes": {"n": node}}}}
    if weights_file is not None:
        body["metadata"] = {"weights_file": weights_file, **(extra_meta or {})}
    path = os.path.join(folder, "m.json")
    with open(path, "w") as f:
        json.dump({"m": body}, f)
    return path


def test_sidecar_values_load_with_dtype_and_shape(tmp_path):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.savez(tmp_path / "m.weights.npz", a0=w)
    model = mdf_engine.load(_write_model(str(tmp_path)))
    p = model.graphs[0].nodes[0].parameters[0]
    assert p.value.dtype == np.float32 and p.value.shape == (3, 4)
    np.testing.assert_array_equal(p.value, w)
    assert not (p.metadata or {}).get("sidecar")


def test_sidecar_default_value_of_an_input_port(tmp_path):
    x = np.linspace(0, 1, 5)
    np.savez(tmp_path / "m.weights.npz", a0=x)
    model = mdf_engine.load(_write_model(str(tmp_path), field="default_value"))
    np.testing.assert_array_equal(model.graphs[0].nodes[0].input_ports[0].default_value, x)


@pytest.mark.parametrize(
    "name,match",
    [
        ("../m.weights.npz", "relative path inside"),
        ("/etc/passwd.npz", "relative path inside"),
        ("sub/../../m.weights.npz", "relative path inside"),
        ("m.weights.json", "must be a .npz"),
        ("missing.npz", "no weights file"),
        (["list"], "expected a file name"),
    ],
)
def test_sidecar_names_confined_to_the_model_directory(tmp_path, name, match):
    inner = tmp_path / "inner"
    inner.mkdir()
    np.savez(tmp_path / "m.weights.npz", a0=np.zeros(3))
    with pytest.raises(MDFError, match=match):
        mdf_engine.load(_write_model(str(inner), weights_file=name))


def test_sidecar_symlink_leading_out_is_refused(tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    np.savez(tmp_path / "outside.npz", a0=np.zeros(3))
    os.symlink(tmp_path / "outside.npz", inner / "m.weights.npz")
    with pytest.raises(MDFError, match="leads outside"):
        mdf_engine.load(_write_model(str(inner)))


def test_sidecar_object_arrays_are_refused_without_unpickling(tmp_path):
    np.savez(tmp_path / "m.weights.npz", a0=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(MDFError, match="dtype object"):
        mdf_engine.load(_write_model(str(tmp_path)))


def test_sidecar_header_that_lies_about_its_size_is_refused(tmp_path):
    """A member whose .npy header declares a huge shape over a few bytes of data."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = (10**9,)
    with zipfile.ZipFile(tmp_path / "m.weights.npz", "w") as z:
        with z.open("a0.npy", "w") as f:
            np.lib.format.write_array_header_1_0(f, header)
            f.write(b"\0" * 8)
    with pytest.raises(MDFError, match="declares 8000000000 bytes"):
        mdf_engine.load(_write_model(str(tmp_path)))


def test_sidecar_limits_on_structure(tmp_path, monkeypatch):
    np.savez(tmp_path / "m.weights.npz", a0=np.zeros(1000), a1=np.zeros(2), a2=np.zeros(2))
    path = _write_model(str(tmp_path))
    monkeypatch.setattr(sidecar, "MAX_ARRAYS", 2)
    with pytest.raises(MDFError, match="holds 3 arrays; the limit is 2"):
        mdf_engine.load(path)
    monkeypatch.setattr(sidecar, "MAX_ARRAYS", 100)
    monkeypatch.setattr(sidecar, "MAX_TOTAL_BYTES", 4000)
    with pytest.raises(MDFError, match="exceed 4000 bytes"):
        mdf_engine.load(path)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"ref": "zz"}, "has no array 'zz'"),
        ({"field": "function"}, "only value and default_value"),
        ({"weights_file": None}, "names none"),
    ],
)
def test_sidecar_references_checked(tmp_path, kw, match):
    np.savez(tmp_path / "m.weights.npz", a0=np.zeros(3))
    with pytest.raises(MDFError, match=match):
        mdf_engine.load(_write_model(str(tmp_path), **kw))


def test_sidecar_that_is_not_a_zip_is_an_mdf_error(tmp_path):
    (tmp_path / "m.weights.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(MDFError, match="not a readable .npz"):
        mdf_engine.load(_write_model(str(tmp_path)))


def test_pytorch_models_with_large_weights_through_the_sidecar(tmp_path):
    """The ONNX package's PyTorch test models whose weights reach the sidecar, saved as JSON
    and YAML by ``save_imported`` and loaded back, still match their stored outputs."""
    from onnx_cases import pytorch_case, pytorch_models

    from mdf_engine.onnx_io.importer import import_model, run_onnx, save_imported

    big = [
        (d, m)
        for d, m in pytorch_models()
        if any(
            int(np.prod(t.dims)) >= sidecar.MIN_ELEMENTS
            for t in pytorch_case(d, m).proto.graph.initializer
        )
    ]
    assert len(big) >= 3, big
    for k, (d, m) in enumerate(big):
        case = pytorch_case(d, m)
        path = str(tmp_path / (f"{m}.json" if k % 2 else f"{m}.yaml"))
        assert save_imported(import_model(case.proto), path) > 0
        with np.errstate(all="ignore"):
            result = run_onnx(mdf_engine.load(path), case.feeds)
        for name, exp in zip(case.outputs, case.expected):
            got = np.asarray(result[name])
            assert got.dtype == exp.dtype and got.shape == exp.shape, m
            np.testing.assert_allclose(got, exp, rtol=1e-3, atol=1e-5, err_msg=m)
