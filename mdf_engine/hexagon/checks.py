"""Hexagon self-check ops. Each has no output; a failed check raises :class:`MDFError` saying by how
much it failed (the largest error, the tolerance, the first failing index).

* Check: exact equality.
* Close_f: max|dut - ref| <= max(tol * (ref range incl. 0), 0.07), tol default 0.07; NaN fails.
* Close_quint8 / Close_int32 / Close_qint32: |dut - ref| / max|ref| <= 0.07 for every element.
* Close_q_quint8: |deq(dut) - deq(ref)| / (ref_max - ref_min) <= error_ratio (default 0.07).
* Close_d32: excess error |dut - r| - |round(r) - r| with r the float reference in code space;
  max excess <= 0.2 and fraction of elements with nonzero excess <= 0.05 by default.
"""

from __future__ import annotations

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import as4d, dequantize_u8, fval, step_u8

FUDGE_FACTOR = 0.07


def _same_shape(op: str, dut: np.ndarray, ref: np.ndarray) -> None:
    if dut.shape != ref.shape:
        raise MDFError(f"{op}: shapes differ: dut {dut.shape} vs ref {ref.shape}")


def _fail(op: str, err: np.ndarray, tol: float, what: str) -> None:
    i = int(np.nanargmax(np.where(np.isnan(err), np.inf, err)))
    idx = np.unravel_index(i, err.shape)
    worst = float(err.reshape(-1)[i])
    n = int(np.sum(~(err <= tol)))
    raise MDFError(
        f"{op} failed: {what} {worst:.6g} exceeds the tolerance {tol:.6g} by "
        f"{worst - tol:.6g} at index {tuple(int(v) for v in idx)} "
        f"({n} of {err.size} elements out of tolerance)"
    )


@hexop("Check", ("dut", "ref"), outputs=())
def check(dut, ref, *, padding="NA"):
    """Input 0 must equal input 1 exactly."""
    a, b = as4d(dut), as4d(ref)
    _same_shape("Check", a, b)
    if not np.array_equal(a, b):
        err = np.abs(a.astype(np.float64) - b.astype(np.float64))
        err[np.isnan(err)] = np.inf
        _fail("Check", err, 0.0, "difference")
    return ()


@hexop("Close_f", ("dut", "ref", "tolerance"), outputs=(), optional=("tolerance",))
def close_f(dut, ref, tolerance=None, *, padding="NA"):
    """Float closeness: max error within tol x the reference range (at least 0.07)."""
    a, b = as4d(dut, np.float64), as4d(ref, np.float64)
    _same_shape("Close_f", a, b)
    tol = FUDGE_FACTOR if tolerance is None else float(fval(tolerance))
    rng = (max(0.0, np.nanmax(b)) - min(0.0, np.nanmin(b))) if b.size else 0.0
    limit = max(tol * rng, FUDGE_FACTOR)
    err = np.abs(a - b)
    if err.size and not np.all(err <= limit):
        _fail("Close_f", err, limit, "absolute error")
    return ()


def _close_rel(op: str, dut, ref) -> tuple:
    a, b = as4d(dut).astype(np.float64), as4d(ref).astype(np.float64)
    _same_shape(op, a, b)
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    err = np.abs(a - b) / (scale if scale > 0 else 1.0)
    limit = FUDGE_FACTOR if scale > 0 else 0.0
    if err.size and not np.all(err <= limit):
        _fail(op, err, limit, "relative error (|dut-ref|/max|ref|)")
    return ()


@hexop("Close_quint8", ("dut", "ref"), outputs=())
def close_quint8(dut, ref, *, padding="NA"):
    """Raw quint8 codes close within 0.07 of max|ref|."""
    return _close_rel("Close_quint8", dut, ref)


@hexop("Close_int32", ("dut", "ref"), outputs=())
def close_int32(dut, ref, *, padding="NA"):
    """int32 values close within 0.07 of max|ref|."""
    return _close_rel("Close_int32", dut, ref)


@hexop("Close_qint32", ("dut", "ref"), outputs=())
def close_qint32(dut, ref, *, padding="NA"):
    """qint32 codes close within 0.07 of max|ref|."""
    return _close_rel("Close_qint32", dut, ref)


@hexop(
    "Close_q_quint8",
    ("dut", "dut_min", "dut_max", "ref", "ref_min", "ref_max", "offset_index", "error_ratio"),
    outputs=(),
    optional=("offset_index", "error_ratio"),
)
def close_q_quint8(
    dut,
    dut_min,
    dut_max,
    ref,
    ref_min,
    ref_max,
    offset_index=None,
    error_ratio=None,
    *,
    padding="NA",
):
    """Dequantized dut and ref agree within error_ratio of the reference range. offset_index
    (for looped graphs) selects nothing here: the whole tensor is compared."""
    a = dequantize_u8(as4d(dut), fval(dut_min), fval(dut_max)).astype(np.float64)
    b = dequantize_u8(as4d(ref), fval(ref_min), fval(ref_max)).astype(np.float64)
    _same_shape("Close_q_quint8", a, b)
    ratio = FUDGE_FACTOR if error_ratio is None else float(fval(error_ratio))
    rng = float(fval(ref_max)) - float(fval(ref_min))
    err = np.abs(a - b) / (rng if rng > 0 else 1.0)
    if err.size and not np.all(err <= ratio):
        _fail("Close_q_quint8", err, ratio, "error / reference range")
    return ()


def close_d32(dut, dut_min, dut_max, ref, max_excess=None, max_fraction=None):
    """Excess-error check of quint8 data against a float reference (see module doc)."""
    q = as4d(dut).astype(np.float64)
    b = as4d(ref, np.float64)
    _same_shape("Close_d32", q, b)
    mn, mx = fval(dut_min), fval(dut_max)
    r = np.clip((b - float(mn)) / float(step_u8(mn, mx)), 0.0, 255.0)
    excess = np.maximum(0.0, np.abs(q - r) - np.abs(np.floor(r + 0.5) - r))
    lim = 0.2 if max_excess is None else abs(float(fval(max_excess)))
    frac_lim = 0.05 if max_fraction is None else float(fval(max_fraction))
    if excess.size and excess.max() > lim + 1e-9:
        _fail("Close_d32", excess, lim, "excess error (codes)")
    frac = float(np.mean(excess > 1e-6)) if excess.size else 0.0
    if frac > frac_lim:
        raise MDFError(
            f"Close_d32 failed: {frac:.4f} of the outputs have a nonzero excess error, "
            f"more than the allowed {frac_lim:.4f} (by {frac - frac_lim:.4f})"
        )
    return ()
