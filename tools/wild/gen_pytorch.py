"""Corpus: modeci-mdf's ``pytorch_to_mdf`` on small torch models, with torch's own forward
pass as the oracle.

Run in the generator venv (``/work/venvs/wild``: torch 2.13.0 CPU, modeci-mdf 0.4.15)::

    /work/venvs/wild/bin/python tools/wild/gen_pytorch.py

modeci-mdf 0.4.15 imports the TorchScript ONNX exporter's internals from the places torch 2.1
kept them (``torch.onnx._globals``, ``torch.onnx.utils._model_to_graph``); torch 2.13 keeps the
same exporter under ``torch.onnx._internal.torchscript_exporter``. The aliases below only make
those imports resolve; the exporter that runs is torch's own.
"""

from __future__ import annotations

import functools
import json
import sys

import numpy as np
import torch
import torch.onnx.utils
from torch.onnx._internal.torchscript_exporter import _globals
from torch.onnx._internal.torchscript_exporter import utils as _ts_utils

sys.modules.setdefault("torch.onnx._globals", _globals)
torch.onnx.utils._model_to_graph = _ts_utils._model_to_graph  # type: ignore[attr-defined]

from modeci_mdf.interfaces.pytorch import pytorch_to_mdf  # noqa: E402
from oracle import CORPUS, plain, version, write_oracle  # noqa: E402

OUT = CORPUS / "pytorch_to_mdf"
torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.fc2 = torch.nn.Linear(8, 3)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.tanh(self.fc1(x))), dim=-1)


class MLPSigmoid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = torch.nn.Sequential(
            torch.nn.Linear(4, 5),
            torch.nn.Sigmoid(),
            torch.nn.Linear(5, 5),
            torch.nn.LeakyReLU(0.1),
            torch.nn.Linear(5, 2),
        )

    def forward(self, x):
        return self.seq(x)


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 3, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(3)
        self.pool = torch.nn.MaxPool2d(2)
        self.conv2 = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1, groups=1)
        self.avg = torch.nn.AvgPool2d(2, ceil_mode=True, count_include_pad=False)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv1(x))))
        x = self.avg(torch.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


class GroupConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1, groups=2)
        self.pool = torch.nn.AvgPool2d(3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(self.conv(x))


class Recurrent(torch.nn.Module):
    def __init__(self, kind: str):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(3, 4, batch_first=True)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        y = self.rnn(x)[0]
        return self.fc(y[:, -1])


class Branch(torch.nn.Module):
    """Control flow decided at trace time (the exporter traces: the branch taken is kept)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        if float(y.sum()) > 0:
            return y * 2 + 1
        return y - 1


def models():
    yield "mlp_softmax", MLP(), (torch.randn(2, 6),)
    yield "mlp_sigmoid_leaky", MLPSigmoid(), (torch.randn(3, 4),)
    cnn = CNN()
    cnn.bn.running_mean.uniform_(-0.5, 0.5)
    cnn.bn.running_var.uniform_(0.5, 1.5)
    yield "cnn_conv_bn_pools", cnn.eval(), (torch.randn(1, 1, 8, 8),)
    yield "group_conv_avgpool", GroupConv(), (torch.randn(1, 4, 6, 6),)
    for kind in ("RNN", "GRU", "LSTM"):
        yield f"{kind.lower()}_last_step", Recurrent(kind), (torch.randn(1, 5, 3),)
    yield "traced_branch", Branch(), (torch.randn(1, 3),)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_this = functools.partial(
        write_oracle,
        writer="modeci-mdf pytorch_to_mdf",
        writer_version=f"modeci-mdf {version('modeci-mdf')}, torch {torch.__version__}",
        generator="tools/wild/gen_pytorch.py",
    )
    report = []
    for name, module, args in models():
        module.eval()
        with torch.no_grad():
            expected = module(*args).numpy()
        try:
            mdf_model, params = pytorch_to_mdf(module, args=args)
        except Exception as e:  # the writer refused: recorded, no file
            report.append((name, f"pytorch_to_mdf failed: {type(e).__name__}: {e}"))
            continue
        path = OUT / f"{name}.json"
        mdf_model.to_json_file(str(path))
        g = mdf_model.graphs[0]
        senders = {e.sender for e in g.edges}
        last = [n for n in g.nodes if n.id not in senders]
        out_key = f"{last[-1].id}.{last[-1].output_ports[0].id}"
        init = {f"input{i + 1}": a.numpy() for i, a in enumerate(args)}
        init.update(
            {
                k: (v.detach().numpy() if hasattr(v, "detach") else np.asarray(v))
                for k, v in params.items()
            }
        )
        inputs_file = f"{name}.inputs.json"
        (OUT / inputs_file).write_text(json.dumps(plain(init)) + "\n")
        lost = [
            n.id
            for n in g.nodes
            for p in n.parameters
            if p.function == "onnx::If" and not any(q.id == "then_branch" for q in n.parameters)
        ]
        if lost:
            # the writer dropped the branches of an If: no engine can run the file (the
            # reference fails on it too); the oracle is a refusal naming what is missing
            write_this(
                path,
                protocol="refuse",
                steps=1,
                dt=None,
                expected={"error_contains": "then_branch"},
                initializer_file=inputs_file,
                note=f"onnx::If node(s) {lost} written without then_branch/"
                "else_branch; modeci-mdf's reference engine fails on it too",
            )
            report.append((name, "written without If branches: oracle is a refusal"))
            continue
        write_this(
            path,
            protocol="torch",
            steps=1,
            dt=None,
            expected={out_key: expected},
            initializer_file=inputs_file,
            rtol=1e-4,
            atol=1e-5,
            note="torch forward pass (float32) of the module the file was made from; "
            "the initializer holds the example input and the weights",
        )
        report.append((name, "ok"))
    for r in report:
        print(*r)


if __name__ == "__main__":
    main()
