"""The nopython argument handling of the recurrent ONNX operators (RNN, GRU, LSTM), for their
``jit=`` forms that the compiled backend calls from its loop: what
:class:`._recurrent_inputs.RecurrentInputs` does for the Python kernels, in Numba.

An omitted optional input arrives as ``None`` (Numba prunes the branch that reads it at compile
time), as the ONNX spec says for optional inputs: ``B`` zeros, ``sequence_lens`` the whole
sequence, ``initial_h`` / ``initial_c`` zeros, no peepholes. The ``activations`` attribute
arrives as a tuple of names (or None: the op's defaults) and ``activation_alpha`` /
``activation_beta`` as arrays or tuples of numbers; :func:`activation_tables` reads them as
:func:`._recurrent_inputs.activation_tables` does. Shapes were checked by the interpreted
warm-up (compiled values keep their shapes); the sequence lengths, which are data, are checked
on every call.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload

from ._recurrent_kernels import ACT_CODES, ACT_PARAMS

#: the activation names (lower case) in the order of their codes
_NAMES = tuple(sorted(ACT_CODES, key=ACT_CODES.get))
assert [ACT_CODES[n] for n in _NAMES] == list(range(len(_NAMES)))
#: per code: number of parameters, default alpha, default beta
_PARAMS = np.array([ACT_PARAMS[c] for c in range(len(_NAMES))], dtype=np.float64)


def _codes(names):  # pragma: no cover - typed by the overload below
    """The activation names (a tuple of strings, or None: none given) as codes (int64[:])."""
    raise NotImplementedError


@overload(_codes, jit_options={"cache": True})
def _codes_ov(names):
    if isinstance(names, (types.NoneType, types.Omitted)):
        return lambda names: np.empty(0, np.int64)
    if isinstance(names, types.UniTuple) and isinstance(names.dtype, types.UnicodeType):

        def codes(names):
            out = np.empty(len(names), np.int64)
            for i in range(len(names)):
                key = names[i].lower()
                out[i] = -1
                for c in range(len(_NAMES)):
                    if _NAMES[c] == key:
                        out[i] = c
                if out[i] < 0:
                    raise ValueError("unknown activation of a recurrent op")
            return out

        return codes
    if isinstance(names, types.BaseTuple) and len(names) == 0:
        return lambda names: np.empty(0, np.int64)
    raise TypingError(f"not a list of activation names: {names}")


def _floats(v):  # pragma: no cover - typed by the overload below
    """Numbers (None, a number, a tuple, an array) as float64[:]."""
    raise NotImplementedError


@overload(_floats, jit_options={"cache": True})
def _floats_ov(v):
    if isinstance(v, (types.NoneType, types.Omitted)):
        return lambda v: np.empty(0, np.float64)
    if isinstance(v, types.Number):
        return lambda v: np.full(1, np.float64(v))
    if isinstance(v, types.BaseTuple):

        def tuple_floats(v):
            out = np.empty(len(v), np.float64)
            for i in range(len(v)):
                out[i] = np.float64(v[i])
            return out

        return tuple_floats
    if isinstance(v, types.Array):
        return lambda v: np.ascontiguousarray(v).reshape(-1).astype(np.float64)
    raise TypingError(f"not a list of numbers: {v}")


@numba.njit(cache=True)
def activation_tables(activations, alpha, beta, defaults, nd):
    """``(codes, alphas, betas)``, each ``[nd, len(defaults)]``: the activations of each
    direction (``defaults``, the op's default codes, when none are given; one direction's list
    serves both of a bidirectional op), each taking its parameters in order from ``alpha`` and
    ``beta`` (its defaults when they run out)."""
    per = len(defaults)
    codes = _codes(activations)
    if len(codes) == 0:
        codes = np.empty(per * nd, np.int64)
        for i in range(per * nd):
            codes[i] = defaults[i % per]
    elif len(codes) == per and nd == 2:
        codes = np.concatenate((codes, codes))
    if len(codes) != per * nd:
        raise ValueError("activations must list the activations of every direction")
    al, be = _floats(alpha), _floats(beta)
    alphas, betas = np.empty(per * nd), np.empty(per * nd)
    ia = ib = 0
    for i in range(per * nd):
        c = codes[i]
        alphas[i], betas[i] = _PARAMS[c, 1], _PARAMS[c, 2]
        if _PARAMS[c, 0] >= 1 and ia < len(al):
            alphas[i] = al[ia]
            ia += 1
        if _PARAMS[c, 0] >= 2 and ib < len(be):
            betas[i] = be[ib]
            ib += 1
    return codes.reshape(nd, per), alphas.reshape(nd, per), betas.reshape(nd, per)


def work_bits(x, n):  # pragma: no cover - typed by the overload below
    """An empty integer buffer of ``n`` items, int32 for float32 ``x``, else int64 (the work
    buffer of ``apply_activation``)."""
    raise NotImplementedError


@overload(work_bits, jit_options={"cache": True})
def _work_bits(x, n):
    if x.dtype == types.float32:
        return lambda x, n: np.empty(n, dtype=np.int32)
    return lambda x, n: np.empty(n, dtype=np.int64)


@numba.njit(cache=True)
def n_directions(direction):
    """1 for ``forward`` and ``reverse``, 2 for ``bidirectional``."""
    if direction == "bidirectional":
        return 2
    if direction == "forward" or direction == "reverse":
        return 1
    raise ValueError("direction must be forward, reverse or bidirectional")


@numba.njit(cache=True)
def is_reverse(direction, d):
    """Direction ``d`` runs backwards in time."""
    return d == 1 or direction == "reverse"


@numba.njit(cache=True)
def sequence(X, layout):
    """``X`` as a C-contiguous ``[seq, batch, input]`` array of its own dtype."""
    if layout != 0:
        return np.ascontiguousarray(X.transpose(1, 0, 2))
    return np.ascontiguousarray(X)


@numba.njit(cache=True)
def weights(A, dtype):
    """A weight array as a C-contiguous array of ``dtype`` (the input's)."""
    return np.ascontiguousarray(A).astype(dtype)


@numba.njit(cache=True)
def biases(B, nd, width, dtype):
    """``B``, or zeros when it was omitted: ``[directions, width]``."""
    if B is None:
        return np.zeros((nd, width), dtype=dtype)
    return np.ascontiguousarray(B).astype(dtype)


@numba.njit(cache=True)
def lengths(sequence_lens, T, Bt):
    """Each batch entry's length: ``sequence_lens`` (checked to lie in [0, T]), or ``T``."""
    if sequence_lens is None:
        return np.full(Bt, T, dtype=np.int64)
    flat = np.ascontiguousarray(sequence_lens).reshape(-1)
    if flat.shape[0] != Bt:
        raise ValueError("sequence_lens must hold one length per batch entry")
    lens = np.empty(Bt, dtype=np.int64)
    for b in range(Bt):
        v = np.int64(flat[b])
        if not 0 <= v <= T:
            raise ValueError("sequence_lens must lie in [0, sequence length]")
        lens[b] = v
    return lens


@numba.njit(cache=True)
def state(s, nd, Bt, H, layout, dtype):
    """An initial state ``[directions, batch, hidden]`` (``s`` in ``layout``), zeros when
    omitted."""
    if s is None:
        return np.zeros((nd, Bt, H), dtype=dtype)
    a = np.ascontiguousarray(s).astype(dtype)
    if layout != 0:
        return np.ascontiguousarray(a.transpose(1, 0, 2))
    return a


@numba.njit(cache=True)
def inputs(X, W, R, B, sequence_lens, initial_h, direction, hidden, layout, gates):
    """What every recurrent op reads first, in the form its time loops take:
    ``(x, W, R, B, lens, h0, nd)``: the sequence ``[seq, batch, input]``, the weights and biases
    in its dtype (``B`` zeros ``[nd, 2 * gates * hidden]`` when omitted), each batch entry's
    length, the initial hidden state ``[nd, batch, hidden]`` and the number of directions."""
    x = sequence(X, layout)
    dt = x.dtype
    T, Bt, H = x.shape[0], x.shape[1], int(hidden)
    nd = n_directions(direction)
    return (
        x,
        weights(W, dt),
        weights(R, dt),
        biases(B, nd, 2 * gates * H, dt),
        lengths(sequence_lens, T, Bt),
        state(initial_h, nd, Bt, H, layout, dt),
        nd,
    )


@numba.njit(cache=True)
def project(X, Wd):
    """``X @ Wd^T`` for every time step at once, as ``[T, B, G*H]``."""
    T, Bt, I = X.shape
    return np.dot(X.reshape(T * Bt, I), np.ascontiguousarray(Wd.T)).reshape(T, Bt, Wd.shape[0])


@numba.njit(cache=True)
def output_y(Y, layout):
    """``Y`` ``[T, directions, batch, hidden]`` in ``layout`` (1: ``[batch, T, dirs, H]``)."""
    if layout != 0:
        return np.ascontiguousarray(Y.transpose(2, 0, 1, 3))
    return Y


@numba.njit(cache=True)
def output_state(S, layout):
    """A final state ``[directions, batch, hidden]`` in ``layout``."""
    if layout != 0:
        return np.ascontiguousarray(S.transpose(1, 0, 2))
    return S
