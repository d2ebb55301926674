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
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Products with fewer multiply-adds than this run on one BLAS thread (~5-8 ms of one core).
#: At 1 << 25 SqueezeNet's 1000x512x169 classifier product (86 M) ran on two OpenBLAS threads
#: and a whole inference took 60 ms instead of 35 ms (and twice the CPU time) at load 4.6 on
#: the shared 2-core machine (benchmarks/cnn_speed.py, docs/performance.md "Goal 5"); on an
#: idle machine such a product would gain at most ~1 ms from a second thread.
SHARED_MIN_MACS = 1 << 27

_controllers: list[Any] | None = None


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


@contextmanager
def blas_threads_for(macs: int) -> Iterator[None]:
    """Within the block, BLAS uses one thread when the product has fewer than
    :data:`SHARED_MIN_MACS` multiply-adds; otherwise the thread counts are left as they are."""
    if macs >= SHARED_MIN_MACS:
        yield
        return
    saved = []
    for lib in _blas_controllers():
        n = lib.get_num_threads()
        if n is not None and n > 1:
            saved.append((lib, n))
            lib.set_num_threads(1)
    try:
        yield
    finally:
        for lib, n in saved:
            lib.set_num_threads(n)
