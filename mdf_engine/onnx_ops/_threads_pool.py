"""The engine's worker threads, which share a kernel's independent items with the calling
thread (issue 22, goal 5: at default threading onnxruntime runs an inference on every core).

A shared kernel is a list of ``total`` items (a convolution's blocks of filters over chunks of
positions: :mod:`._conv_threads`; a MaxPool's planes: :mod:`.maxpool`) and a nopython, ``nogil``
*claim* loop ``claim(state, total, board, seen, budget, *args)`` that takes the next item from one atomic counter
(``state[0]``, :func:`fetch_add`) until none is left and counts each finished one in
``state[1]``. :func:`share` runs it on the calling thread and on up to ``threads - 1`` worker
threads (plain Python threads of the engine, started on first use, again after a fork); the
caller then waits only for the items a worker has taken and not yet finished. A worker that the
machine has not scheduled yet takes nothing and costs nothing (when it runs, it finds the
counter spent): on a busy machine the caller does the work alone instead of waiting for every
thread of a fork-join region to be scheduled, as a ``prange`` (or BLAS) region does.

**Waking without the kernel's sleep and wake-up.** On an idle 2-core VM, a thread that sleeps
on a lock and is woken by another costs tens to hundreds of microseconds before it runs (the
idle virtual CPU must be woken by the host), about as long as one of SqueezeNet's shared
kernels. So both sides spin for a bounded time, in nopython code that holds no GIL, before
they sleep: a worker's claim loop, once no item is left, watches a counter that :func:`share`
increments with each task it hands out (:func:`watch`, :data:`WORKER_SPIN_US`: the gap between
two shared kernels of an inference is the caller's Python and its unshared kernels); it
returns to Python, and takes the GIL, only when a task came or the time is up (:func:`rest`,
called at the end of an interpreted update, sends the workers to sleep at once). The caller
waits for a worker's last items by watching ``state[1]`` (:data:`CALLER_SPIN_US`, a few
items' time) before it polls it every 0.2 ms. Spinning costs CPU time that a fork-join pool
spends too (onnxruntime's threads spin after each run); a busy machine bounds it by the same
times.

**How many threads** (:func:`threads_for`): Numba's thread count of the calling thread
(``numba.set_num_threads``, ``NUMBA_NUM_THREADS``), at most ``MDF_ENGINE_BLAS_THREADS`` when
that is set (:func:`~._blas.thread_cap`: the most threads one of the engine's products or
kernels may use; 1 means the calling thread alone), and at most one per ``part`` units of work.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.ufunc.parallel import _iget_num_threads

from ._blas import THREADS_VAR, thread_cap

#: How long a worker watches for the next task before it sleeps on its queue (microseconds).
WORKER_SPIN_US = 200
#: How long the caller watches a worker finish its last items before it polls (0.2 ms sleeps).
CALLER_SPIN_US = 100
#: How long the caller waits for a worker to start before it runs a hook (:func:`share`).
START_SPIN_US = 50


@intrinsic
def fetch_add(typingctx, arr, i):
    """``arr[i] += 1`` as one atomic (sequentially consistent) operation on an int64 array;
    returns the value before."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.int64)
        ptr = builder.gep(a.data, [idx])
        return builder.atomic_rmw("add", ptr, ir.Constant(ir.IntType(64), 1), "seq_cst")

    return types.int64(arr, i), codegen


@intrinsic
def atomic_read(typingctx, arr, i):
    """``arr[i]`` of an int64 array read as one atomic (acquire) load: a loop that watches it
    sees another thread's writes (a plain load could be hoisted out of the loop)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64 and arr.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.int64)
        ptr = builder.gep(a.data, [idx])
        return builder.load_atomic(ptr, "acquire", 8)

    return types.int64(arr, i), codegen


@intrinsic
def _cycles(typingctx):
    """The processor's cycle (time stamp) counter."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


@numba.njit(cache=True)
def _now_cycles():
    return _cycles()


@numba.njit(cache=True, nogil=True)
def _spin_while(arr, i, value, budget):
    """Watch ``arr[i]`` while it equals ``value``, for at most ``budget`` counter cycles;
    returns its last value."""
    start = _cycles()
    v = atomic_read(arr, i)
    while v == value:
        if _cycles() - start > budget:
            break
        v = atomic_read(arr, i)
    return v


@numba.njit(cache=True, nogil=True)
def watch(board, seen, budget):
    """What a claim loop does once no item is left: on a worker (``budget`` > 0), watch the
    task counter ``board[0]`` while it is ``seen`` for at most ``budget`` counter cycles,
    without going back to Python (and the GIL) in between; returns whether it changed (a new
    task was handed out, or :func:`rest` was called)."""
    if budget <= 0:
        return False
    return _spin_while(board, 0, seen, budget) != seen


@numba.njit(cache=True, nogil=True)
def _spin_below(arr, i, value, budget):
    """Watch ``arr[i]`` while it is below ``value``, for at most ``budget`` counter cycles;
    returns whether it reached ``value``."""
    start = _cycles()
    while atomic_read(arr, i) < value:
        if _cycles() - start > budget:
            return False
    return True


@numba.njit(cache=True)
def _numba_threads():
    return _iget_num_threads()


_launched: list[bool] = []


def numba_threads() -> int:
    """Numba's thread count of the calling thread (``numba.get_num_threads()``, which costs
    ~5 us a call; after that first call, which starts Numba's threading layer that the jitted
    form calls into, ~0.1 us)."""
    if not _launched:
        _launched.append(True)
        return numba.get_num_threads()
    return _numba_threads()


def threads_for(work: int, part: int) -> int:
    """The most threads a kernel of ``work`` units, one thread per ``part`` of them, uses now
    (see the module docstring); 1 below two parts."""
    if work < 2 * part:
        return 1
    n = min(numba_threads(), work // part)
    if n > 1:
        cap = _cap()
        if cap and cap < n:
            n = cap
    return max(n, 1)


#: (the setting's text, its value) as :func:`_cap` last read them
_cap_memo: list = [None, 0]


def _cap() -> int:
    """:func:`~._blas.thread_cap`, read and checked again only when the variable's text
    changed (a shared kernel asks once per call: the check and its import cost microseconds)."""
    text = os.environ.get(THREADS_VAR)
    if text != _cap_memo[0]:
        _cap_memo[1] = thread_cap()
        _cap_memo[0] = text
    return _cap_memo[1]


class _Task:
    """One worker's share of a kernel: the claim loop and its arguments."""

    __slots__ = ("claim", "args", "started", "done", "error")

    def __init__(self, claim: Callable[..., None], args: tuple) -> None:
        self.claim = claim
        self.args = args
        self.started = False
        #: set once the claim loop returned (no Event: the caller polls, see :func:`_finish`)
        self.done = False
        self.error: BaseException | None = None

    def run(self) -> bool:
        """Run the claim loop (and its watch); returns whether the watch saw a new task."""
        self.started = True
        args, self.args = self.args, ()
        found = False
        try:
            found = self.claim(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            self.error = e
        finally:
            # the arrays are the caller's to free, in its order: freed later by this thread
            # (at its next task), they made glibc trim and fault in the caller's heap pages
            # again (~400 page faults, 0.3-0.7 ms of system time per SqueezeNet conv1)
            del args
            self.done = True
        return bool(found)


_queues: list[queue.SimpleQueue] = []
_pid = [0]
_lock = threading.Lock()
#: [tasks handed out so far]: what an idle worker watches (see the module docstring)
_board = np.zeros(1, dtype=np.int64)
#: [worker spin, caller spin, start spin] in counter cycles, measured once per process
_budget: list[int] = []
#: each worker's current spin (cycles), adapted by its loop (see :func:`_serve`)
_spins: list[int] = []


def _calibrate() -> None:
    """The spin times in the cycle counter's units (its rate measured over ~2 ms)."""
    c0, t0 = _now_cycles(), time.perf_counter()
    time.sleep(0.002)
    rate = (_now_cycles() - c0) / max(time.perf_counter() - t0, 1e-4)  # per second
    rate = max(rate, 1e6)  # a counter that does not tick: short spins, then the polling
    _budget[:] = [
        int(rate * WORKER_SPIN_US * 1e-6),
        int(rate * CALLER_SPIN_US * 1e-6),
        int(rate * START_SPIN_US * 1e-6),
    ]


def _serve(q: queue.SimpleQueue, k: int) -> None:
    """Worker ``k``'s loop: run the tasks of its queue. A task's claim loop watches for the
    next task before it returns (:func:`watch`, ``_spins[k]`` cycles): when one came, the
    worker takes it from its queue, else it sleeps on the queue. A watch that timed out halves
    the next one (down to 1/16), one that saw a task doubles it back: on a busy machine, where
    the caller is often descheduled between two kernels, a worker spins less."""
    found = True
    while True:
        task = None
        if found:
            try:
                task = q.get_nowait()
            except queue.Empty:
                pass
        if task is None:
            task = q.get()
        found = task.run()
        full, now = _budget[0], _spins[k]
        _spins[k] = min(full, 2 * now) if found else max(full // 16, now // 2)
        del task


def _workers(n: int) -> list[queue.SimpleQueue]:
    """The queues of ``n`` worker threads (started on first use, again after a fork)."""
    if len(_queues) >= n and _pid[0] == os.getpid():  # (no lock: they exist, nothing changes)
        return _queues[:n]
    with _lock:
        if _pid[0] != os.getpid():
            _queues.clear()
            _spins.clear()
            _pid[0] = os.getpid()
        if not _budget:
            _calibrate()
        while len(_queues) < n:
            q: queue.SimpleQueue = queue.SimpleQueue()
            k = len(_queues)
            _spins.append(_budget[0])
            name = f"mdf-engine-worker-{k + 1}"
            threading.Thread(target=_serve, args=(q, k), name=name, daemon=True).start()
            _queues.append(q)
        return _queues[:n]


_local = threading.local()


def while_sharing(run: Callable[[], None] | None) -> Callable[[], None] | None:
    """Set the calling thread's *hook* (None clears it) and return the one it replaces if
    that was never run. The next :func:`share` on this thread with a worker to share with
    hands its task out, runs the hook (once) instead of starting on its items, then takes
    what is left of them: the interpreter runs the other nodes of a time step there, nodes
    that read nothing the kernel writes (:func:`mdf_engine.interpreter_lean.parallel_step`),
    while a worker starts on the items."""
    prev = getattr(_local, "hook", None)
    _local.hook = run
    return prev


def rest() -> None:
    """Tell the spinning workers that no task follows soon (the end of an interpreted
    update): they sleep on their queues at once instead of spinning out their time."""
    if _queues:
        _board[0] += 1


def share(claim: Callable[..., bool], total: int, args_of: Callable[[int], tuple], n: int) -> None:
    """Run ``claim(state, total, board, seen, budget, *args_of(j))`` on the calling thread
    (j = 0, ``budget`` 0) and on ``n - 1`` workers (see the module docstring; a claim ends
    with ``return watch(board, seen, budget)``); returns once all ``total`` items are done. An
    error of a worker's claim is raised here."""
    state = np.zeros(2, dtype=np.int64)
    queues = _workers(n - 1)
    seen = int(_board[0]) + 1  # (the counter once these tasks are handed out)
    tasks = [
        _Task(claim, (state, total, _board, seen, _spins[j]) + args_of(j + 1)) for j in range(n - 1)
    ]
    for q, t in zip(queues, tasks):
        q.put(t)
    _board[0] += 1  # (another caller thread's share in between: a watcher wakes at once)
    mine = (state, total, _board, seen, 0) + args_of(0)
    hook = getattr(_local, "hook", None)
    if hook is not None:
        _local.hook = None
        if tasks:  # let a worker take the GIL, dispatch its claim and start (nogil) first:
            # the hook is Python, which would keep a worker waiting for the GIL throughout
            _spin_while(state, 0, 0, _budget[2])
        try:
            hook()
        finally:
            _finish(claim, mine, tasks)
        return
    _finish(claim, mine, tasks)


def _finish(claim: Callable[..., bool], args: tuple, tasks: list) -> None:
    """The caller's part of :func:`share`: take the items left, wait for the workers' last
    (spinning, then polling: a worker's task is done when its items are, its flag set only
    once its watch ends)."""
    claim(*args)
    state, total = args[0], args[1]
    if state[1] < total and not _spin_below(state, 1, total, _budget[1]):
        for t in tasks:  # a worker still has items: it has started, and will finish them
            while t.started and state[1] < total and not t.done:
                time.sleep(0.0002)
    for t in tasks:
        if t.error is not None and t.done:
            raise t.error
