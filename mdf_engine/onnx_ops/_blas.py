"""BLAS thread counts for the operators' matrix products: small products on one thread.

OpenBLAS shares a product between its threads from a size where that pays on an idle machine.
On a busy one (or beside other thread pools) a shared product waits for every thread to be
scheduled: a 32x144x256 Conv product took 47 ms on two OpenBLAS threads and 0.07 ms on one.
:func:`blas_threads_for` therefore runs products below :data:`SHARED_MIN_MACS` multiply-adds on
one BLAS thread and leaves bigger ones to the caller's setting (the BLAS default, or a
``threadpoolctl.threadpool_limits`` around the call): it only ever lowers the thread count, for
the duration of one operator call, so the engine never uses more threads than the caller allows.

The limit is process-wide (BLAS has one pool per library): with several Python threads using
BLAS at once, threadpoolctl lets only one of them change it.

**One policy for both backends** (issue 22, goal 5: never oversubscribe the machine). Compiled
(nopython) code cannot change BLAS's thread count between its products, so a call of a compiled
graph's code runs under the count :func:`blas_threads_for` gives the *largest* product the graph
made in its interpreted warm-up (:func:`largest_product` records it; the compile cache keeps
it): every product of a graph below :data:`SHARED_MIN_MACS` (SqueezeNet 1.1's largest is 86 M)
means one BLAS thread for the whole call, as the interpreter gives each of them; a graph without
BLAS products is called as it is. The setting ``MDF_ENGINE_BLAS_THREADS`` (:data:`THREADS_VAR`)
changes the rule on both backends: unset or 0, the size rule above; N >= 1, every product (and
every compiled call that makes one) on at most N BLAS threads.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Products with fewer multiply-adds than this run on one BLAS thread (~5-8 ms of one core).
#: At 1 << 25 SqueezeNet's 1000x512x169 classifier product (86 M) ran on two OpenBLAS threads
#: and a whole inference took 60 ms instead of 35 ms (and twice the CPU time) at load 4.6 on
#: the shared 2-core machine (benchmarks/cnn_speed.py, docs/performance.md "Goal 5"); on an
#: idle machine such a product would gain at most ~1 ms from a second thread.
SHARED_MIN_MACS = 1 << 27

#: Products with fewer multiply-adds than this are left alone (not worth the 10-60 us of changing
#: the thread counts, nor recorded by :func:`largest_product`): OpenBLAS runs them on one thread
#: by itself (it shares a gemv from 9,216 and a gemm from 262,144 multiply-adds).
UNSHARED_MACS = 1 << 13

#: The setting: the most BLAS threads one of the engine's products may use (unset or 0: one
#: below :data:`SHARED_MIN_MACS` multiply-adds, the caller's count at or above).
THREADS_VAR = "MDF_ENGINE_BLAS_THREADS"

_controllers: list[Any] | None = None
#: the largest product seen inside :func:`largest_product` (None: not recording)
_largest: list[int] | None = None


def _blas_controllers() -> list[Any]:
    """threadpoolctl's controllers of every loaded BLAS, scipy's included (Numba's gemm helper,
    used by Conv, calls scipy's BLAS: it is loaded first so that it is found)."""
    global _controllers
    if _controllers is None:
        if importlib.util.find_spec("scipy") is not None:
            importlib.import_module("scipy.linalg.cython_blas")
        from threadpoolctl import ThreadpoolController

        _controllers = list(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _controllers


def thread_cap() -> int:
    """``MDF_ENGINE_BLAS_THREADS`` (0 when unset: the size rule)."""
    from ..errors import MDFError

    text = os.environ.get(THREADS_VAR, "").strip()
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise MDFError(f"{THREADS_VAR}={text!r} is not a whole number >= 0") from None
    if value < 0:
        raise MDFError(f"{THREADS_VAR}={text!r} is not a whole number >= 0")
    return value


def threads_for(macs: int) -> int | None:
    """The most BLAS threads a product of ``macs`` multiply-adds gets (None: the caller's
    count, whatever it is)."""
    cap = thread_cap()
    if cap:
        return cap
    return 1 if macs < SHARED_MIN_MACS else None


@contextmanager
def largest_product() -> Iterator[list[int]]:
    """Within the block, the largest product passed to :func:`blas_threads_for` is kept in the
    yielded list's one item (0: none; the compiled backend's warm-up, see the module's text)."""
    global _largest
    outer, _largest = _largest, [0]
    seen = _largest
    try:
        yield seen
    finally:
        _largest = outer
        if outer is not None:
            outer[0] = max(outer[0], seen[0])


@contextmanager
def blas_threads_for(macs: int, *, compiled_blas: bool = True) -> Iterator[None]:
    """Within the block, BLAS uses at most :func:`threads_for` threads (one for a product below
    :data:`SHARED_MIN_MACS` multiply-adds, unless ``MDF_ENGINE_BLAS_THREADS`` says otherwise);
    thread counts are only ever lowered, and restored after the block. ``compiled_blas``: the
    kernel's compiled form makes this product by BLAS too (False: by own loops), so that
    :func:`largest_product` records it for the compiled call's thread count."""
    if macs < UNSHARED_MACS:
        yield
        return
    if _largest is not None and compiled_blas:
        _largest[0] = max(_largest[0], int(macs))
    most = threads_for(macs)
    if most is None:
        yield
        return
    saved = []
    for lib in _blas_controllers():
        n = lib.get_num_threads()
        if n is not None and n > most:
            saved.append((lib, n))
            lib.set_num_threads(most)
    try:
        yield
    finally:
        for lib, n in saved:
            lib.set_num_threads(n)
