"""Corpus: modeci-mdf's ``onnx_to_mdf`` on ONNX models, with onnxruntime on the source model
as the oracle.

Two sources of ONNX models:
* a selection of the onnx package's backend node test cases (``collect_testcases()``), with
  their own input data;
* small networks exported from torch with ``torch.onnx.export(..., dynamo=False)``, the
  TorchScript exporter whose node names (``/fc1/Gemm``) are not Python identifiers.

Run in the generator venv: ``/work/venvs/wild/bin/python tools/wild/gen_onnx.py``.
"""

from __future__ import annotations

import io
import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
import torch
from modeci_mdf.interfaces.onnx import onnx_to_mdf
from modeci_mdf.interfaces.onnx.importer import id_to_port

from oracle import CORPUS, plain, version, write_oracle

OUT = CORPUS / "onnx_to_mdf"

#: Backend node test cases: common layers and elementwise ops of small networks.
BACKEND_CASES = [
    "test_gemm_transposeB", "test_gemm_alpha", "test_matmul_2d", "test_add_bcast", "test_relu",
    "test_sigmoid", "test_tanh", "test_softmax_axis_1", "test_leakyrelu", "test_elu",
    "test_conv_with_strides_padding", "test_maxpool_2d_pads", "test_averagepool_2d_pads",
    "test_batchnorm_example", "test_concat_2d_axis_0", "test_transpose_default",
    "test_flatten_axis1", "test_gather_0", "test_where_example", "test_clip_default_min",
    "test_reshape_reordered_all_dims", "test_unsqueeze_axis_0", "test_lstm_defaults",
    "test_gru_defaults", "test_rnn_seq_length", "test_pow", "test_hardsigmoid",
    "test_reduce_mean_keepdims_example", "test_constant_pad", "test_einsum_batch_matmul",
]


class SmallMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(5, 7)
        self.fc2 = torch.nn.Linear(7, 3)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(3 * 3 * 3, 4)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))


class SmallRNN(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(2, 3)

    def forward(self, x):
        return self.rnn(x)[0]


class Residual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.tanh(self.b(torch.relu(self.a(x))) + x)


def torch_models():
    torch.manual_seed(1)
    yield "torch_mlp", SmallMLP(), torch.randn(2, 5)
    yield "torch_cnn", SmallCNN(), torch.randn(1, 2, 6, 6)
    yield "torch_residual", Residual(), torch.randn(3, 4)
    for kind in ("RNN", "GRU", "LSTM"):
        yield f"torch_{kind.lower()}", SmallRNN(kind), torch.randn(4, 1, 2)


def backend_models():
    from onnx.backend.test.case.node import collect_testcases

    by_name = {c.name: c for c in collect_testcases()}
    for name in BACKEND_CASES:
        case = by_name[name]
        inputs, _outputs = case.data_sets[0]
        model = case.model
        feeds = {i.name: np.asarray(v) for i, v in zip(model.graph.input, inputs)}
        yield name, model, feeds


def convert(name: str, model: onnx.ModelProto, feeds: dict, report: list, source: str) -> None:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    try:
        mdf = onnx_to_mdf(model)
    except Exception as e:
        report.append((name, f"onnx_to_mdf failed: {type(e).__name__}: {e}"))
        return
    path = OUT / f"{name}.json"
    try:
        mdf.to_json_file(str(path))
    except TypeError as e:  # the writer cannot save it (bytes string attributes)
        path.unlink(missing_ok=True)
        report.append((name, f"to_json_file failed: {type(e).__name__}: {e}"))
        return
    g = mdf.graphs[0]
    expected = {}
    for out, value in zip(model.graph.output, outs):
        port = id_to_port(out.name)
        node = next((n for n in g.nodes for o in n.output_ports if o.id == port), None)
        if node is not None:
            expected[f"{node.id}.{port}"] = value
    init = {id_to_port(k): v for k, v in feeds.items()}
    # onnx_to_mdf keeps an ONNX initializer (a weight) as an input port without its value: the
    # weights are given through the initializer, as the inputs are
    ports = {ip.id for n in g.nodes for ip in n.input_ports}
    weights = {id_to_port(t.name): numpy_helper.to_array(t) for t in model.graph.initializer
               if id_to_port(t.name) in ports}
    inputs_file = None
    if weights:
        inputs_file = f"{name}.inputs.json"
        (OUT / inputs_file).write_text(json.dumps(plain({**init, **weights})) + "\n")
    write_oracle(path, writer="modeci-mdf onnx_to_mdf",
                 writer_version=f"modeci-mdf {version('modeci-mdf')}, onnx {onnx.__version__}",
                 generator="tools/wild/gen_onnx.py", protocol="onnxruntime", steps=1, dt=None,
                 expected=expected, initializer=None if weights else init,
                 initializer_file=inputs_file, rtol=1e-4, atol=1e-5,
                 note=f"onnxruntime {ort.__version__} on the source model ({source})")
    report.append((name, "ok"))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    report: list = []
    for name, model, feeds in backend_models():
        convert(name, model, feeds, report, "onnx backend node test case")
    for name, module, x in torch_models():
        module.eval()
        buf = io.BytesIO()
        torch.onnx.export(module, (x,), buf, dynamo=False, opset_version=15,
                          input_names=["input"], output_names=["output"])
        model = onnx.load_from_string(buf.getvalue())
        convert(name, model, {"input": x.numpy()}, report,
                f"torch {torch.__version__} torch.onnx.export(dynamo=False, opset 15)")
    for r in report:
        print(*r)
    (OUT / "generation_report.json").write_text(json.dumps(plain(report), indent=1) + "\n")


if __name__ == "__main__":
    main()
