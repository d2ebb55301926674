"""Corpus: modeci-mdf's Keras importer (``keras_to_mdf``) on small Keras models, with Keras's own
``model.predict`` as the oracle.

Run in the generator venv (``/work/venvs/keras``: ``pip install tensorflow-cpu modeci-mdf``;
tensorflow-cpu 2.21, Keras 3)::

    /work/venvs/keras/bin/python tools/wild/gen_keras.py

``keras_to_mdf(model, args=x)`` writes the example input ``x`` as the value of an ``Input`` node,
and each Dense layer's weights and bias as parameters (their values are in the file): the file
runs without an initializer. Each model's output node is the last node of the graph.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import tensorflow as tf
from modeci_mdf.interfaces.keras import keras_to_mdf
from oracle import CORPUS, reference_run, version, write_oracle

OUT = CORPUS / "keras"
RNG = np.random.default_rng(0)
tf.keras.utils.set_random_seed(0)


def dense(*layers: tuple[int, str], n_in: int, name: str) -> tf.keras.Model:
    """A sequential MLP of Dense layers (units, activation)."""
    model = tf.keras.Sequential(
        [tf.keras.Input(shape=(n_in,))]
        + [
            tf.keras.layers.Dense(u, activation=a, name=f"{name}_dense{i}")
            for i, (u, a) in enumerate(layers)
        ],
        name=name,
    )
    return model


def models() -> list[tuple[str, tf.keras.Model, np.ndarray]]:
    return [
        ("mlp_relu_softmax", dense((8, "relu"), (3, "softmax"), n_in=5, name="mlp1"), (2, 5)),
        ("mlp_linear", dense((4, "linear"), (2, "linear"), n_in=3, name="mlp2"), (3, 3)),
        (
            "mlp_sigmoid",
            dense((6, "sigmoid"), (6, "relu"), (2, "sigmoid"), n_in=4, name="mlp3"),
            (2, 4),
        ),
        (
            "mlp_relu_deep",
            dense((16, "relu"), (8, "relu"), (4, "relu"), n_in=10, name="mlp4"),
            (4, 10),
        ),
    ]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_this = functools.partial(
        write_oracle,
        writer="modeci-mdf keras_to_mdf",
        writer_version=f"modeci-mdf {version('modeci-mdf')}, tensorflow-cpu {tf.__version__}, "
        f"keras {tf.keras.__version__}",
        generator="tools/wild/gen_keras.py",
    )
    report = []
    for name, model, shape in models():
        x = RNG.normal(size=shape).astype(np.float32)
        expected = model.predict(x, verbose=0)
        try:
            mdf_model, _params = keras_to_mdf(model, args=x)
        except Exception as e:  # the writer refused: recorded, no file
            report.append((name, f"keras_to_mdf failed: {type(e).__name__}: {e}"))
            continue
        path = OUT / f"{name}.json"
        mdf_model.to_json_file(str(path))
        last = mdf_model.graphs[0].nodes[-1]
        out_key = f"{last.id}.{last.output_ports[0].id}"
        ref = np.asarray(reference_run(path, 1, None)[0][out_key])
        if not np.allclose(ref, expected, rtol=1e-4, atol=1e-5):
            # the file computes something else than the Keras model: the oracle is what the
            # file says (modeci-mdf's reference engine), Keras's output is kept in the note
            write_this(
                path,
                protocol="reference",
                steps=1,
                dt=None,
                expected={out_key: ref},
                rtol=1e-6,
                atol=1e-7,
                note="keras_to_mdf writes a sigmoid activation as 1 / (1 + exponential(x)), "
                "i.e. sigmoid(-x): the file differs from the Keras model (whose predict gives "
                f"{np.round(expected, 6).tolist()}); the oracle is the reference engine's run "
                "of the file",
            )
            report.append((name, "file differs from Keras (sigmoid sign): reference oracle"))
            continue
        write_this(
            path,
            protocol="keras",
            steps=1,
            dt=None,
            expected={out_key: expected},
            rtol=1e-4,
            atol=1e-5,
            note="Keras model.predict (float32) of the model the file was made from; the "
            "file holds the example input (node Input) and the weights",
        )
        report.append((name, "ok"))
    (OUT / "generation_report.json").write_text(json.dumps(dict(report), indent=1) + "\n")
    for r in report:
        print(*r)


if __name__ == "__main__":
    main()
