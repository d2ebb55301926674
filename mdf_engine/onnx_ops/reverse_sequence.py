"""``onnx::ReverseSequence``: reverse the first ``sequence_lens[b]`` steps of each batch entry
along ``time_axis`` (the rest unchanged), with a Numba kernel on a (batch, time, inner) view.
"""

from __future__ import annotations

import numba
import numpy as np

from ..errors import MDFError
from . import onnx_op
from ._index_common import as_bits, guarded


@numba.njit(cache=True)
def _reverse_seq_core(x, lens):
    """x is (batch, time, inner); reverse the first lens[b] time steps of each batch."""
    nb, nt, inner = x.shape
    out = x.copy()
    for b in range(nb):
        L = lens[b]
        if L > nt or L < 0:
            raise IndexError("sequence length out of range")
        for t in range(L):
            for i in range(inner):
                out[b, t, i] = x[b, L - 1 - t, i]
    return out


@onnx_op(
    "ReverseSequence",
    inputs=("input", "sequence_lens"),
    attributes={"batch_axis": 1, "time_axis": 0},
    outputs=("Y",),
    since=10,
)
def reversesequence(input, sequence_lens, *, batch_axis=1, time_axis=0):
    """Reverse the first ``sequence_lens[b]`` steps along ``time_axis`` of each batch entry."""
    x = np.asarray(input)
    ba, ta = int(batch_axis), int(time_axis)
    if {ba, ta} != {0, 1} or x.ndim < 2:
        raise MDFError("ReverseSequence: batch_axis and time_axis must be 0 and 1 (either order)")
    t = x if ba == 0 else np.swapaxes(x, 0, 1)
    shp = t.shape
    t3 = np.ascontiguousarray(t).reshape(shp[0], shp[1], -1)
    lens = np.asarray(sequence_lens).astype(np.int64).reshape(-1)
    if lens.size != shp[0]:
        raise MDFError(f"ReverseSequence: sequence_lens needs {shp[0]} entries, got {lens.size}")
    if t3.dtype.kind in "OUS":
        out = t3.copy()
        for b, L in enumerate(lens.tolist()):
            out[b, :L] = t3[b, :L][::-1]
    else:
        out = guarded("ReverseSequence", _reverse_seq_core, as_bits(t3), lens).view(t3.dtype)
    out = out.reshape(shp)
    return (np.ascontiguousarray(out if ba == 0 else np.swapaxes(out, 0, 1)),)
