"""Tier 0's machine in plain Python and numpy, for the shortest runs.

The same programs as :mod:`.machine`, one numpy operation per instruction: no Numba function
is loaded at all, which saves Numba's own start (its first call in a process, ~0.5 s) when a
run is a few updates of a small graph. It counts the instructions it executes, which is how
:mod:`.tier` predicts the next call's work.
"""

from __future__ import annotations

import numpy as np

from . import ops as m

_UNARY = {
    m.U["copy"]: lambda x: x,
    m.U["neg"]: np.negative,
    m.U["not"]: lambda x: (x == 0.0).astype(np.float64),
    m.U["abs"]: np.abs,
    m.U["square"]: lambda x: x * x,
    m.U["reciprocal"]: lambda x: 1.0 / x,
    m.U["bool"]: lambda x: (x != 0.0).astype(np.float64),
    m.U["isnan"]: lambda x: np.isnan(x).astype(np.float64),
    m.U["isinf"]: lambda x: np.isinf(x).astype(np.float64),
    m.U["isfinite"]: lambda x: np.isfinite(x).astype(np.float64),
}
for _name in m.UNARY:
    if m.U[_name] not in _UNARY:
        _UNARY[m.U[_name]] = getattr(np, _name)

_BINARY = {
    m.BI["add"]: np.add,
    m.BI["sub"]: np.subtract,
    m.BI["mul"]: np.multiply,
    m.BI["div"]: np.true_divide,
    m.BI["pow"]: np.power,
    m.BI["floordiv"]: np.floor_divide,
    m.BI["mod"]: np.remainder,
    m.BI["lt"]: np.less,
    m.BI["le"]: np.less_equal,
    m.BI["gt"]: np.greater,
    m.BI["ge"]: np.greater_equal,
    m.BI["eq"]: np.equal,
    m.BI["ne"]: np.not_equal,
    m.BI["and"]: lambda x, y: np.logical_and(x != 0.0, y != 0.0),
    m.BI["or"]: lambda x, y: np.logical_or(x != 0.0, y != 0.0),
}
for _name in m.BINARY:
    if m.BI[_name] not in _BINARY:
        _BINARY[m.BI[_name]] = getattr(np, _name)

_REDUCE = {
    m.R["sum"]: np.sum,
    m.R["prod"]: np.prod,
    m.R["max"]: np.max,
    m.R["min"]: np.min,
    m.R["mean"]: np.mean,
}


def _operand(H: np.ndarray, at: int, n: int, mode: int, size: int = 0) -> np.ndarray:
    if mode == 1:
        return H[at : at + n]
    if mode == 2:
        return np.tile(H[at : at + size], n // size)
    return H[at : at + 1]


def execute(rows: list[list[int]], H: np.ndarray, logbuf: np.ndarray, meta: np.ndarray) -> int:
    """Run a program (its instruction ``rows`` as lists) over ``H`` as
    :func:`.machine.execute` does; returns the instructions executed."""
    pc, count = 0, 0
    with np.errstate(all="ignore"):
        while True:
            op, s, d, a, b, c, n, fl, e, f = rows[pc]
            count += 1
            if op == m.BIN:
                x = _operand(H, a, n, fl & 3, e)
                y = _operand(H, b, n, (fl >> 2) & 3, f)
                H[d : d + n] = _BINARY[s](x, y)
                pc += 1
            elif op == m.UN:
                H[d : d + n] = _UNARY[s](_operand(H, a, n, fl & 3, e))
                pc += 1
            elif op == m.JZ:
                pc = d if H[a] == 0.0 else pc + 1
            elif op == m.JMP:
                pc = d
            elif op == m.WHERE:
                x = _operand(H, a, n, fl & 3)
                y = _operand(H, b, n, (fl >> 2) & 3)
                cond = _operand(H, c, n, (fl >> 4) & 3)
                H[d : d + n] = np.where(cond != 0.0, x, y)
                pc += 1
            elif op == m.CHK:
                i = int(H[b])
                if i < -n or i >= n:
                    err = int(meta[m.META_ERR])
                    if H[err] == 0.0:
                        H[err : err + 6] = [-3.0, c, H[int(meta[m.META_STEP])], i, n, f]
                    i = 0
                elif i < 0:
                    i += n
                H[d] = i
                pc += 1
            elif op == m.LDX or op == m.STX:
                at = a + int(H[b]) * e + (int(H[c]) * f if c >= 0 else 0)
                if op == m.LDX:
                    H[d : d + n] = H[at : at + n]
                else:
                    H[at : at + n] = _operand(H, d, n, fl & 3)
                pc += 1
            elif op == m.DOT:
                rows_, inner, cols = c, e, f
                A = H[a : a + rows_ * inner].reshape(rows_, inner)
                B = H[b : b + inner * cols].reshape(inner, cols)
                H[d : d + rows_ * cols] = (A @ B).reshape(-1)
                pc += 1
            elif op == m.RED:
                H[d] = _REDUCE[s](H[a : a + n])
                pc += 1
            elif op == m.LOG:
                logbuf[int(H[b])] = int(H[a])
                pc += 1
            elif op == m.LOGLEN:
                H[d] = logbuf.shape[0]
                pc += 1
            else:
                return count
