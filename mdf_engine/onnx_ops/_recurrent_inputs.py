"""Argument handling shared by the recurrent ONNX operators (RNN, GRU, LSTM): validation and
layout normalisation of the inputs (:class:`RecurrentInputs`), the activation attributes as
kernel codes (:func:`activation_tables`), and the schema the three have in common
(:func:`schema`).

Supported: directions forward/reverse/bidirectional, every activation of the ONNX list
(Relu Tanh Sigmoid Affine LeakyRelu ThresholdedRelu ScaledTanh HardSigmoid Elu Softsign
Softplus, names case-insensitive) with ``activation_alpha``/``activation_beta`` consumed in order
by the activations that take parameters, ``clip`` (applied to every gate pre-activation),
``sequence_lens`` (steps past a batch entry's length give zeros in ``Y``; ``Y_h``/``Y_c`` hold the
last valid step, the initial state for a length of 0 (onnxruntime gives zeros there; see
docs/semantics.md); a reverse direction starts from each entry's own last valid step), ``initial_h``,
``initial_c``, peepholes ``P``, LSTM ``input_forget`` (``f = 1 - i``), GRU
``linear_before_reset``, and ``layout`` 0 (``[seq, batch, ...]``) or 1 (``[batch, seq, ...]``).
Computation is in the input's float dtype (float32 or float64).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from ._recurrent_kernels import ACT_CODES, ACT_PARAMS


def activation_tables(
    names: Any, alpha: Any, beta: Any, per_dir: int, defaults: tuple[str, ...], n_dir: int, op: str
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per direction: (codes, alphas, betas) arrays of length ``per_dir`` (read-only arrays
    shared between calls: the parsing is memoised on the attribute values)."""
    key = (
        tuple(names) if names else None,
        tuple(alpha) if alpha is not None else None,
        tuple(beta) if beta is not None else None,
        per_dir,
        defaults,
        n_dir,
        op,
    )
    return _parse_activations(*key)


@functools.lru_cache(maxsize=256)
def _parse_activations(
    names: Any, alpha: Any, beta: Any, per_dir: int, defaults: tuple[str, ...], n_dir: int, op: str
) -> list:
    names = list(names) if names else list(defaults) * n_dir
    if len(names) == per_dir and n_dir == 2:
        names = names * 2
    if len(names) != per_dir * n_dir:
        raise MDFError(
            f"{op}: activations must list {per_dir * n_dir} functions "
            f"({per_dir} per direction), got {names}"
        )
    alpha = list(alpha) if alpha is not None else []
    beta = list(beta) if beta is not None else []
    codes, alphas, betas = [], [], []
    ia = ib = 0
    for name in names:
        key = str(name).lower()
        if key not in ACT_CODES:
            raise MDFError(
                f"{op}: unknown activation '{name}' (known: {', '.join(sorted(ACT_CODES))})"
            )
        code = ACT_CODES[key]
        nparam, da, db = ACT_PARAMS[code]
        a, b = da, db
        if nparam >= 1 and ia < len(alpha):
            a = float(alpha[ia])
            ia += 1
        if nparam >= 2 and ib < len(beta):
            b = float(beta[ib])
            ib += 1
        codes.append(code)
        alphas.append(a)
        betas.append(b)
    out = []
    for d in range(n_dir):
        s = slice(d * per_dir, (d + 1) * per_dir)
        arrays = (
            np.array(codes[s], dtype=np.int64),
            np.array(alphas[s], dtype=np.float64),
            np.array(betas[s], dtype=np.float64),
        )
        for a in arrays:
            a.flags.writeable = False
        out.append(arrays)
    return out


def aligned(a: np.ndarray, align: int = 32) -> np.ndarray:
    """``a`` (C-contiguous) itself when its data starts on an ``align``-byte boundary, else a
    copy that does. The recurrence loops read ``R`` with 32-byte vector loads; from a base that
    is only 16-byte aligned (numpy's guarantee) every other load splits a cache line, measured
    25-35% slower for H=128 float32."""
    if a.ctypes.data % align == 0:
        return a
    buf = np.empty(a.nbytes + align, dtype=np.uint8)
    start = -buf.ctypes.data % align
    out = buf[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class RecurrentInputs:
    """Validated, layout-normalised inputs shared by the three operators."""

    def __init__(
        self,
        op: str,
        gates: int,
        X: Any,
        W: Any,
        R: Any,
        B: Any,
        sequence_lens: Any,
        initial_h: Any,
        attrs: dict[str, Any],
        defaults: tuple[str, ...],
    ):
        """``attrs``: the op's attributes given (:func:`schema` lists them); ``defaults``: its
        activations when none are given (one name per activation of a direction)."""
        self.op = op
        hidden_size = attrs.get("hidden_size")
        direction = attrs.get("direction", "forward")
        layout = attrs.get("layout", 0)
        X = np.asarray(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        self.dtype = X.dtype
        if X.ndim != 3:
            raise MDFError(f"{op}: X must be 3-D, got shape {X.shape}")
        if layout:
            X = X.transpose(1, 0, 2)
        self.X = np.ascontiguousarray(X)
        T, Bt, _ = self.X.shape
        self.dirs = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}.get(
            direction
        )
        if self.dirs is None:
            raise MDFError(
                f"{op}: direction must be forward, reverse or bidirectional, got '{direction}'"
            )
        nd = len(self.dirs)
        self.W = np.asarray(W, dtype=self.dtype)
        self.R = np.ascontiguousarray(R, dtype=self.dtype)
        H = int(hidden_size) if hidden_size is not None else self.R.shape[-1]
        self.H = H
        if self.W.shape != (nd, gates * H, self.X.shape[2]):
            raise MDFError(
                f"{op}: W must have shape {(nd, gates * H, self.X.shape[2])}, got {self.W.shape}"
            )
        if self.R.shape != (nd, gates * H, H):
            raise MDFError(f"{op}: R must have shape {(nd, gates * H, H)}, got {self.R.shape}")
        # rows can all start 32-byte aligned; the copy (10-25 us for 256 KB) pays from ~16 steps
        if T >= 16 and (H * self.R.itemsize) % 32 == 0:
            self.R = aligned(self.R)
        self.B = (
            np.zeros((nd, 2 * gates * H), self.dtype)
            if B is None
            else np.asarray(B, dtype=self.dtype)
        )
        if self.B.shape != (nd, 2 * gates * H):
            raise MDFError(f"{op}: B must have shape {(nd, 2 * gates * H)}, got {self.B.shape}")
        if sequence_lens is None:
            self.lens = np.full(Bt, T, dtype=np.int64)
        else:
            self.lens = np.asarray(sequence_lens).astype(np.int64).reshape(-1)
        if sequence_lens is not None and (
            self.lens.shape != (Bt,) or (Bt and not 0 <= self.lens.min() <= self.lens.max() <= T)
        ):
            raise MDFError(
                f"{op}: sequence_lens must hold {Bt} lengths in [0, {T}], got {self.lens.tolist()}"
            )
        self.layout = layout
        self.h0 = self.state(initial_h, "initial_h", op)
        self.acts = activation_tables(
            attrs.get("activations"),
            attrs.get("activation_alpha"),
            attrs.get("activation_beta"),
            len(defaults),
            defaults,
            nd,
            op,
        )
        clip = attrs.get("clip")
        #: the bound of every gate's pre-activation (0: none)
        self.clip = float(clip) if clip else 0.0

    def state(self, s: Any, what: str, op: str) -> np.ndarray:
        nd, Bt = len(self.dirs), self.X.shape[1]
        if s is None:
            return np.zeros((nd, Bt, self.H), self.dtype)
        s = np.asarray(s, dtype=self.dtype)
        if self.layout:
            s = s.transpose(1, 0, 2)
        if s.shape != (nd, Bt, self.H):
            raise MDFError(
                f"{op}: {what} must have shape {(nd, Bt, self.H)} (layout "
                f"{self.layout}), got {s.shape}"
            )
        return np.ascontiguousarray(s)

    def bits(self, n: int) -> np.ndarray:
        """The integer work buffer of :func:`apply_activation` for ``n`` values at a time."""
        return np.empty(n, dtype=np.int32 if self.dtype == np.float32 else np.int64)

    def project(self, d: int) -> np.ndarray:
        """``X @ W[d]^T`` for every time step at once, as [T, B, G*H] (the kernels add the
        biases while reading it)."""
        T, Bt, I = self.X.shape
        return np.dot(self.X.reshape(T * Bt, I), self.W[d].T).reshape(T, Bt, self.W.shape[1])

    def finish(self, per_direction: list[tuple[np.ndarray, ...]]) -> tuple:
        """The op's outputs from each direction's ``(Y, *final states)`` (its time loop's
        result): ``Y`` ``[T, D, B, H]`` and each final state ``[D, B, H]``, in ``layout``."""
        ys = [r[0] for r in per_direction]
        states = [[r[i] for r in per_direction] for i in range(1, len(per_direction[0]))]
        if len(ys) == 1:  # one direction: new unit axes are free views
            Y = ys[0][:, None]
            outs = [s[0][None] for s in states]
        else:
            Y = np.stack(ys, axis=1)  # [T, D, B, H]
            outs = [np.stack(s) for s in states]  # [D, B, H]
        if self.layout:
            Y = np.ascontiguousarray(Y.transpose(2, 0, 1, 3))
            outs = [np.ascontiguousarray(o.transpose(1, 0, 2)) for o in outs]
        return (Y, *outs)


COMMON_ATTRIBUTES = {
    "activation_alpha": None,
    "activation_beta": None,
    "activations": None,
    "clip": None,
    "direction": "forward",
    "hidden_size": REQUIRED,
}

#: the inputs the three ops share (LSTM adds ``initial_c`` and ``P``), all but three optional
INPUTS = ("X", "W", "R", "B", "sequence_lens", "initial_h")


def schema(
    jit: Any, outputs: tuple[str, ...], attributes: dict, extra_inputs: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The ``onnx_op`` keywords of a recurrent op: the shared inputs (and ``extra_inputs``,
    optional too), :data:`COMMON_ATTRIBUTES` with the op's own ``attributes`` and ``layout``,
    opset 7, and its ``jit`` form."""
    return {
        "inputs": INPUTS + extra_inputs,
        "optional": INPUTS[3:] + extra_inputs,
        "attributes": {**COMMON_ATTRIBUTES, **attributes, "layout": 0},
        "outputs": outputs,
        "since": 7,
        "jit": jit,
    }
