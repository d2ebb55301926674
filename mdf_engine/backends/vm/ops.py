"""Tier 0's instruction set: what a program is, shared by the translator and both machines.

A program is a table of instructions (rows of :data:`WIDTH` int64 numbers) over one float64
array, the heap ``H``: every value of a run (the compiled state's scalars and arrays, the
scheduler's counters, locals, temporaries and constants) is a run of heap elements at a fixed
offset. An instruction names its operands by offset; an element-wise instruction covers ``n``
elements, an operand read with stride 0 (a scalar broadcast) or 1. The schedule log is the
only other array (``logbuf``, int64). Model values and the model's own text never appear in
the code: only offsets, counts and operation numbers do.

Columns of a row: ``op, sub, d, a, b, c, n, fl, e, f`` (:data:`OP` ...). ``fl`` says how
each operand of an element-wise instruction is read, two bits each (``a``: bits 0-1, ``b``:
2-3, ``c``: 4-5): 0 every element reads ``x`` (a scalar), 1 element ``i`` is at ``x + i``,
2 at ``x + i % size`` (numpy's broadcast of trailing axes; the size is ``e`` for ``a`` and
``f`` for ``b``).

Two machines run these programs: :mod:`.machine` (one engine-wide ``@njit(cache=True)``
function) and :mod:`.pyvm` (plain numpy); this module imports neither Numba nor them.
"""

from __future__ import annotations

WIDTH = 10
OP, SUB, D, A, B, C, N, FL, E, F = range(WIDTH)

# -- operations -------------------------------------------------------------------------------
#: stop
HALT = 0
#: ``H[d+i] = unary[sub](a[i])`` (operands as ``fl`` says)
UN = 1
#: ``H[d+i] = binary[sub](a[i], b[i])``
BIN = 2
#: ``H[d+i] = a[i] if c[i] != 0 else b[i]`` (no trailing-axes broadcast)
WHERE = 3
#: jump to row ``d``
JMP = 4
#: jump to row ``d`` when ``H[a] == 0``
JZ = 5
#: a checked index: ``H[d] = H[b]`` wrapped if negative; out of ``[-n, n)`` it reports in the
#: ``err`` row (field ``c``, axis ``f``; the step is ``H[e]``) and gives 0
CHK = 6
#: ``H[d+t] = H[a + H[b]*e + H[c]*f + t]`` for ``t < n`` (``c < 0``: no second index)
LDX = 7
#: ``H[a + H[b]*e + H[c]*f + t] = H[d + t]`` (or ``H[d]`` for all, ``fl`` 0) for ``t < n``
STX = 8
#: ``H[d]`` (m x q) = ``H[a]`` (m x k) @ ``H[b]`` (k x q); ``m = c``, ``k = e``, ``q = f``
DOT = 9
#: ``H[d] = reduction[sub](H[a : a+n])``
RED = 10
#: ``logbuf[int(H[b])] = int(H[a])``
LOG = 11
#: ``H[d] = len(logbuf)``
LOGLEN = 12

# -- unary operations (``sub`` of UN) --------------------------------------------------------
UNARY = (
    "copy neg not abs sin cos tan exp log sqrt tanh sinh cosh arcsin arccos arctan floor "
    "ceil log10 log2 log1p expm1 sign exp2 arcsinh arccosh arctanh square reciprocal bool "
    "isnan isinf isfinite trunc rint"
).split()
U = {name: k for k, name in enumerate(UNARY)}

# -- binary operations (``sub`` of BIN) ------------------------------------------------------
BINARY = (
    "add sub mul div pow floordiv mod lt le gt ge eq ne and or maximum minimum arctan2 "
    "hypot fmod copysign"
).split()
BI = {name: k for k, name in enumerate(BINARY)}

# -- reductions (``sub`` of RED) -------------------------------------------------------------
REDUCTIONS = "sum prod max min mean".split()
R = {name: k for k, name in enumerate(REDUCTIONS)}

#: the err row's offset in the heap, and the offset of the update counter (meta entries)
META_ERR, META_STEP = 0, 1
