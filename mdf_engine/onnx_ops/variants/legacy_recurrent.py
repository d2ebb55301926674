"""RNN, GRU and LSTM as the early document (seed 002) gives them, as adapters over the
recurrent family kernels (:func:`~mdf_engine.onnx_ops.rnn.rnn`, ``gru.gru``, ``lstm.lstm``).

What the adapters translate:

* input order: seed 002 passes ``initial_h`` before ``sequence_lens`` (the family kernels take
  the later order); an integer 5th input or a float 6th one means a model uses the later order,
  and the two are swapped back;
* RNN: the single ``activation`` (tanh by default, or ReLU) -> ``activations``;
* GRU: 3 activations per direction (update, reset, hidden) -> the family's 2 (one for both the
  update and the reset gate, which must then be equal, and the hidden one); the seed's candidate
  is the ``linear_before_reset=1`` form, which is therefore the default here (the family's is 0);
* LSTM: 4 activations per direction (input, output, forget, cell; the input/output/forget ones
  must be equal) with the output activation of Ct fixed to tanh -> the family's 3; a 3-name
  list (f, g, h) is the family's form; ``P`` must be the element-wise [dirs, 3H] form;
* activation names are those of the seed (sigmoid, tanh, relu, any case); ``hidden_size`` is
  optional (read from R); ``output_sequence`` is accepted and ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import MDFError
from ..gru import gru
from ..lstm import lstm
from ..rnn import rnn
from .legacy import arr, float_dtype, legacy_op, text

_SEED_ACTIVATIONS = ("sigmoid", "tanh", "relu")


def _names(names: Sequence[Any], op: str) -> list[str]:
    """The activation names, checked against the seed's list."""
    out = []
    for a in names:
        a = text(a)
        if a.lower() not in _SEED_ACTIVATIONS:
            raise MDFError(f"onnx::{op}: activation {a!r} is not one of sigmoid, tanh, relu")
        out.append(a.lower())
    return out


def _order_state_inputs(initial_h: Any, sequence_lens: Any) -> tuple[Any, Any]:
    """(sequence_lens, initial_h) in the family's order from the seed's (initial_h,
    sequence_lens); an integer 5th input (or a float 6th one) means the later order already."""
    a, b = initial_h, sequence_lens
    a_int = a is not None and arr(a).dtype.kind in "iu"
    b_float = b is not None and arr(b).dtype.kind == "f"
    if a_int or b_float:
        a, b = b, a
    return b, a


def _dirs(direction: Any, op: str) -> tuple[str, int]:
    d = text(direction)
    if d not in ("forward", "reverse", "bidirectional"):
        raise MDFError(
            f"onnx::{op}: direction must be forward, reverse or bidirectional, got {d!r}"
        )
    return d, 2 if d == "bidirectional" else 1


def _seed_inputs(
    op: str, initial_h: Any, sequence_lens: Any, direction: Any, activations: Any, default: list
) -> tuple[Any, Any, str, int, list[str]]:
    """What the three seed ops read alike: ``(sequence_lens, initial_h)`` in the family's
    order, the direction and its number of directions, and the activation names checked
    against the seed's list (``default`` when ``activations`` is omitted)."""
    lens, h0 = _order_state_inputs(initial_h, sequence_lens)
    d, dirs = _dirs(direction, op)
    return lens, h0, d, dirs, _names(activations if activations is not None else default, op)


def _family(
    kernel: Any, inputs: tuple, acts: list[str], d: str, clip: Any, hidden_size: Any, **extra: Any
) -> tuple:
    """The family ``kernel`` on a seed op's inputs in the family's order (``X`` as a float
    array), its activations per direction, direction, clip and hidden size (and ``extra``)."""
    X, *rest = inputs
    return kernel(
        float_dtype(arr(X)),
        *rest,
        activations=acts,
        clip=clip,
        direction=d,
        hidden_size=hidden_size,
        **extra,
    )


def _per_direction(names: list[str], per: int, dirs: int, op: str) -> list[list[str]]:
    if len(names) == per:
        names = names * dirs
    if len(names) != per * dirs:
        raise MDFError(f"onnx::{op}: expected {per} activations per direction, got {names}")
    return [names[d * per : (d + 1) * per] for d in range(dirs)]


def _same(names: list[str], op: str, what: str) -> str:
    if len(set(names)) != 1:
        raise MDFError(
            f"onnx::{op}: the {what} gates must share one activation (the family "
            f"kernel's form), got {names}"
        )
    return names[0]


_RNN_ATTRS = {
    "activation": None,
    "activations": None,
    "direction": "forward",
    "hidden_size": None,
    "output_sequence": 0,
    "clip": None,
}


@legacy_op(
    "RNN",
    inputs=("X", "W", "R", "B", "initial_h", "sequence_lens"),
    optional=("B", "initial_h", "sequence_lens"),
    outputs=("Y", "Y_h"),
    attributes=_RNN_ATTRS,
)
def rnn_legacy(
    X,
    W,
    R,
    B=None,
    initial_h=None,
    sequence_lens=None,
    *,
    activation=None,
    activations=None,
    direction="forward",
    hidden_size=None,
    output_sequence=0,
    clip=None,
):
    """RNN of seed 002: Ht = f(Xt Wi^T + Ht-1 Ri^T + Wbi + Rbi); ``activation`` is tanh
    (default) or ReLU (``activations`` per direction is also accepted); inputs in the seed's
    order (initial_h before sequence_lens; the later order is recognised by dtype)."""
    lens, h0, d, dirs, names = _seed_inputs(
        "RNN", initial_h, sequence_lens, direction, activations, [activation or "tanh"]
    )
    acts = [a for per in _per_direction(names, 1, dirs, "RNN") for a in per]
    return _family(rnn, (X, W, R, B, lens, h0), acts, d, clip, hidden_size)


@legacy_op(
    "GRU",
    inputs=("X", "W", "R", "B", "initial_h", "sequence_lens"),
    optional=("B", "initial_h", "sequence_lens"),
    outputs=("Y", "Y_h"),
    attributes={
        "activations": None,
        "direction": "forward",
        "hidden_size": None,
        "output_sequence": 0,
        "clip": None,
        "linear_before_reset": 1,
    },
)
def gru_legacy(
    X,
    W,
    R,
    B=None,
    initial_h=None,
    sequence_lens=None,
    *,
    activations=None,
    direction="forward",
    hidden_size=None,
    output_sequence=0,
    clip=None,
    linear_before_reset=1,
):
    """GRU of seed 002: gates z, r, h (W/R/B in that order); 3 activations per direction
    (update, reset, hidden; default sigmoid, sigmoid, tanh; update and reset equal);
    ht = g(Wh Xt + rt * (Rh Ht-1 + Rbh) + Wbh) (``linear_before_reset=1``, the seed's form);
    Ht = (1 - zt) * ht + zt * Ht-1. Inputs in the seed's order (initial_h before
    sequence_lens)."""
    lens, h0, d, dirs, names = _seed_inputs(
        "GRU", initial_h, sequence_lens, direction, activations, ["sigmoid", "sigmoid", "tanh"]
    )
    acts = []
    for f, r, g in _per_direction(names, 3, dirs, "GRU"):
        acts += [_same([f, r], "GRU", "update and reset"), g]
    lbr = int(linear_before_reset)
    return _family(gru, (X, W, R, B, lens, h0), acts, d, clip, hidden_size, linear_before_reset=lbr)


@legacy_op(
    "LSTM",
    inputs=("X", "W", "R", "B", "initial_h", "sequence_lens", "initial_c", "P"),
    optional=("B", "initial_h", "sequence_lens", "initial_c", "P"),
    outputs=("Y", "Y_h", "Y_c"),
    attributes={
        "activations": None,
        "clip": None,
        "direction": "forward",
        "hidden_size": None,
        "input_forget": 0,
        "output_sequence": 0,
    },
)
def lstm_legacy(
    X,
    W,
    R,
    B=None,
    initial_h=None,
    sequence_lens=None,
    initial_c=None,
    P=None,
    *,
    activations=None,
    clip=None,
    direction="forward",
    hidden_size=None,
    input_forget=0,
    output_sequence=0,
):
    """LSTM of seed 002: gates i, o, f, c; 4 activations per direction (input, output, forget,
    cell; default sigmoid x3, tanh; input/output/forget equal) with the output tanh of Ct fixed
    (a 3-name list f, g, h is read as i/o/f = f, cell = g, output = h); element-wise peepholes P
    [dirs, 3H] (i, o, f); ``clip`` bounds activation inputs; ``input_forget`` couples f = 1 - i.
    Outputs Y, Y_h, Y_c."""
    lens, h0, d, dirs, names = _seed_inputs(
        "LSTM", initial_h, sequence_lens, direction, activations, ["sigmoid"] * 3 + ["tanh"]
    )
    per = 4 if len(names) in (4, 8) else 3
    acts = []
    for group in _per_direction(names, per, dirs, "LSTM"):
        if per == 4:
            acts += [_same(group[:3], "LSTM", "input, output and forget"), group[3], "tanh"]
        else:
            acts += group
    if P is not None:
        hs = arr(R).shape[-1]
        if arr(P).shape != (dirs, 3 * hs):
            raise MDFError(
                f"onnx::LSTM: P must be [{dirs}, {3 * hs}] (element-wise peepholes; "
                f"the seed's matrix form is not supported), got {arr(P).shape}"
            )
    inputs = (X, W, R, B, lens, h0, initial_c, P)
    return _family(lstm, inputs, acts, d, clip, hidden_size, input_forget=int(input_forget))
