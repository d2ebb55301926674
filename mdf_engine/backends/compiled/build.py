"""Making a graph's compiled code: from the compile cache, or a warm-up and the generator.

A throw-away interpreted warm-up (until every node has run once) gives every value a fixed
kind; :class:`~.generator.Generator` writes the module, which goes to a file in the cache
folder named by its hash (beside its constant table) and is imported; :mod:`.cache` records
the layout and the cold state so that a later process skips all of this.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MDFError, NotCompilable
from ...plan import GraphPlan
from ...plan.size import check_compile_size
from . import small_products
from .cache import engine_digest, files_digest, graph_key
from .cache import load as cache_load
from .cache import save as cache_save
from .handover import Handover
from .layout import Layout, Role, Storage, array_dtype, kind_of, scalar_dtype

if TYPE_CHECKING:  # (a cached start imports no code generator)
    from .generated_source import ConstantTable

log = logging.getLogger("mdf_engine")

MAX_WARMUP_STEPS = 20


class WarmupStopped(NotCompilable):
    """The interpreted warm-up of a graph raised an MDFError (the run itself may stop before
    the step that failed, so the graph runs interpreted)."""


@dataclass(frozen=True)
class CompileSpec:
    """What, besides the warm-up's kinds, the generated code depends on: the graph, its node
    order, whether values are checked for NaN/inf, the parameters read from the ``P`` table
    (sweeps) and the values written to the ``rec`` array at every step."""

    plan: GraphPlan
    node_ids: tuple[str, ...]
    check_finite: bool
    swept: tuple[tuple[str, str], ...]
    recorded: tuple[tuple[str, str], ...]


@dataclass
class Built:
    """A graph's compiled code, ready to run: the generated ``module``, where its values live
    (``layout``), the state of a graph that has not run (``arrays``: ``S``, ``A<k>``, ``thr``),
    where it came from (``origin``: "generated" or "cache"), why the schedule stays with
    graph-scheduler (``node_by_node``, or None), the functions it calls through Python and
    the first steps the interpreted backend runs before the compiled loop takes over
    (``handover``, :mod:`.handover`; None: the compiled loop runs from the first step)."""

    module: Any
    layout: Layout
    arrays: dict[str, np.ndarray]
    origin: str
    node_by_node: str | None
    python_calls: list[str]
    handover: Handover | None = None
    #: multiply-adds of the largest BLAS product the warm-up made (0: none): the BLAS thread
    #: count of every call of the code (``onnx_ops._blas``: one thread below 2**27)
    blas_macs: int = 0


#: ``MDF_ENGINE_STRICT=1`` (the test suite sets it): an exception while compiling that is not
#: Numba's own error propagates instead of sending the graph to the interpreter.
STRICT = os.environ.get("MDF_ENGINE_STRICT", "") not in ("", "0")


def from_numba(e: BaseException) -> bool:
    """``e`` is Numba's (or LLVM's) failure to compile generated code, not a bug of ours: a
    Numba error, or raised from inside numba or llvmlite."""
    from numba.core.errors import NumbaError

    if isinstance(e, NumbaError):
        return True
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return name.split(".")[0] in ("numba", "llvmlite")


def numba_failure(e: Exception) -> str:
    """The fallback reason for an error Numba raised compiling a model (its first line of
    detail, without terminal colours)."""
    lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(e)).splitlines() if ln.strip()]
    detail = lines[1] if len(lines) > 1 else (lines[0] if lines else "")
    # a value whose kind changed after the warm-up (helpers.py): that line says which
    changed = [
        ln for ln in lines if ln.endswith("its kind changed after the compiled backend's warm-up")
    ]
    if changed:
        detail = changed[0].removeprefix("TypingError: ")
    detail = detail if len(detail) <= 300 else detail[:297] + "..."  # it may quote model text
    return f"Numba could not compile the model ({type(e).__name__}: {detail})"


def cache_dir() -> Path:
    """Where generated model code and Numba's cache live (``MDF_ENGINE_CACHE`` overrides)."""
    root = os.environ.get("MDF_ENGINE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mdf_engine"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def float_parameters(plan: GraphPlan) -> tuple[list[tuple[str, str]], list[float]]:
    """Parameters whose value (or initial value, if stateful) is a float constant: the
    generated code reads them from a table, so models that differ only in such values
    share one compiled function (and Numba's disk cache)."""
    keys, values = [], []
    for nid, np_ in plan.nodes.items():
        for pp in np_.parameters:
            vp = pp.initial if (pp.stateful or pp.derivative is not None) else pp.value
            if pp.call is not None or vp is None or vp.expr is not None:
                continue
            c = vp.const
            if isinstance(c, np.ndarray) and c.ndim == 0 and c.dtype.kind == "f":
                c = float(c)
            if isinstance(c, float):
                keys.append((nid, pp.id))
                values.append(c)
    return keys, values


def options(
    spec: CompileSpec, initializer: Mapping[str, Any] | None, dt: float | None = None
) -> dict[str, Any]:
    """What, besides the graph, changes the generated code (whether a time step is given
    too: without one the warm-up makes no Euler step, and a value that grows by
    broadcasting in its steps keeps its first shape)."""
    kinds = []
    for k in sorted(initializer or {}):
        v = initializer[k]
        storage, shape = kind_of(v, f"initializer '{k}'")
        dtype = scalar_dtype(v) if storage is Storage.SCALAR else array_dtype(v).__name__
        kinds.append([k, storage.value, shape, dtype])
    return {
        "initializer": kinds,
        "check_finite": spec.check_finite,
        "swept": list(spec.swept),
        "recorded": list(spec.recorded),
        "scheduling_mode": spec.plan.scheduling_mode,
        "dt_given": dt is not None,
        # (small projection products are summed as this machine's BLAS sums them)
        "blas": small_products.blas_identity() if spec.plan.psyneulink else None,
    }


def check_writer(plan: GraphPlan, initializer: Mapping[str, Any] | None) -> None:
    """NotCompilable when the writer's rules (PsyNeuLink's) need what the compiled whole-graph
    loop lacks (it has them all now: backends/compiled/pnl_rules.py; node-by-node graphs are
    checked there, against graph-scheduler's conditions). Called on a compile cache miss only:
    a record exists only for a graph (and initializer keys) that passed."""
    from ...psyneulink_files import not_compiled_reason

    if not plan.psyneulink:
        return
    why = not_compiled_reason(plan, None, initializer, None, whole_loop=True)
    if why:
        raise NotCompilable(why)


def build(
    spec: CompileSpec,
    initializer: Mapping[str, Any] | None,
    dt: float | None,
    check: Callable[[], None] | None = None,
) -> Built:
    """The graph's compiled code: the compile cache's record when there is one, else generated
    after a warm-up (and recorded). NotCompilable when the graph cannot be compiled. ``check``
    (raising NotCompilable) runs before generating only: a record is written only for a graph
    that passed it, and its key covers everything the check reads."""
    check_compile_size(spec.plan)  # (before hashing the graph: a huge one is refused at once)
    key = graph_key(spec.plan, options(spec, initializer, dt))
    found = cache_load(cache_dir(), key)
    if found is None:
        if check is not None:
            check()
        return generate(spec, initializer, dt, key)
    record, arrays = found
    layout = Layout.from_json(record["layout"])
    for k, slot in layout.slots.items():
        if k.role is Role.CONSTANT:  # (held constants are read-only, as when generated)
            arrays[f"A{slot.index}"].flags.writeable = False
    return Built(
        import_generated(cache_dir() / record["module"]),
        layout,
        arrays,
        "cache",
        record.get("node_by_node"),
        record.get("python_calls") or [],
        Handover.from_json(record.get("handover")),
        int(record.get("blas_macs") or 0),
    )


def warm_up(
    spec: CompileSpec, initializer: Mapping[str, Any] | None, dt: float | None
) -> tuple[Any, Handover | None]:
    """An interpreter that ran the graph until every node has run and every value has kept
    its size for one step, and the hand-over (None when the compiled loop can run from the
    first step); WarmupStopped when the model failed in it.

    A value whose size changes in the first steps (numpy broadcasting it into a larger shape)
    has the settled size in its slot, and the interpreted backend runs the steps up to the
    last change (:mod:`.handover`), so every step shows the interpreter's shapes."""
    from ...interpreter import InterpretedGraph

    def run(steps: int | None) -> tuple[Any, list[dict], list[dict]]:
        """The warm-up's interpreter after ``steps`` steps (None: until every node ran, and
        then while the last step changed a size), and every step's sizes."""
        warm = InterpretedGraph(spec.plan, check_finite=spec.check_finite, own_scheduler=True)
        sizes: list[dict] = []
        shapes: list[dict] = []
        while warm.evaluations < MAX_WARMUP_STEPS:
            if steps is not None and warm.evaluations >= steps:
                break
            if steps is None and len(warm.ever_ran) == len(spec.node_ids):
                # one step more than the last change of a size (and than every node's
                # first run): a value whose first step differs in kind but not in size (a
                # parameter's scalar initial value, then the (1, 1) arrays PsyNeuLink's
                # functions return) is allocated in the kind it keeps from then on
                last = _last_change(sizes)
                if warm.evaluations > max(last, first_all[0]):
                    break
            inc = None if (warm.evaluations == 0 or dt is None) else dt
            try:
                warm.evaluate(time_increment=inc, initializer=initializer)
            except MDFError:
                if steps is None and len(warm.ever_ran) == len(spec.node_ids):
                    raise _ExtraStepFailed(warm.evaluations) from None
                raise
            sizes.append(_sizes(warm))
            shapes.append(_sizes(warm, np.shape))
            if len(warm.ever_ran) == len(spec.node_ids) and first_all[0] == 0:
                first_all[0] = warm.evaluations
        return warm, sizes, shapes

    first_all = [0]
    try:
        try:
            warm, sizes, shapes = run(None)
        except _ExtraStepFailed as e:
            # only a step after every node's first run failed (the real run reports it at
            # its step): the kinds of the steps before it
            warm, sizes, shapes = run(e.steps)
    except MDFError as e:
        raise WarmupStopped(f"the warm-up run stopped: {e}") from None
    if len(warm.ever_ran) < len(spec.node_ids):
        never = [n for n in spec.node_ids if n not in warm.ever_ran]
        raise NotCompilable(f"node '{never[0]}' did not run in {MAX_WARMUP_STEPS} warm-up steps")
    last = _last_change(sizes)
    if last == 0:
        return warm, None
    why = _growing(spec, sizes[last - 2 : last], shapes[last - 2 : last])
    if last >= len(sizes):
        raise NotCompilable(f"{why}, and still in step {last} of the warm-up")
    return warm, Handover(last, why)


class _ExtraStepFailed(Exception):
    """A warm-up step after every node had run failed (``steps``: those before it)."""

    def __init__(self, steps: int):
        super().__init__(steps)
        self.steps = steps


def generate(
    spec: CompileSpec, initializer: Mapping[str, Any] | None, dt: float | None, key: str
) -> Built:
    """Warm up, generate and load the graph's module, and record it under ``key``."""
    from ...interpreter import InterpretedGraph
    from .generator import Generator

    # the largest BLAS product of the warm-up decides the compiled calls' BLAS threads
    # (onnx_ops._blas); a graph whose plan loaded no onnx_ops (importing it costs a cold start
    # seconds) makes none
    blas_module = sys.modules.get("mdf_engine.onnx_ops._blas")
    with blas_module.largest_product() if blas_module else nullcontext([0]) as blas:
        warm, handover = warm_up(spec, initializer, dt)
    gen = Generator(spec, warm, initializer)
    if handover is not None and gen.node_by_node is not None:
        # (graph-scheduler's own state cannot be handed over to the node-by-node mode)
        raise NotCompilable(f"{handover.why}; {gen.node_by_node}")
    source = gen.source()
    module = load_generated(source, gen.constants)
    layout = gen.layout()
    arrays = gen.cold_arrays(InterpretedGraph(spec.plan, own_scheduler=True))
    python_calls = sorted({k[0] for k in gen.python_functions})
    built = Built(
        module, layout, arrays, "generated", gen.node_by_node, python_calls, handover, blas[0]
    )
    try:
        cache_save(
            cache_dir(),
            key,
            {
                "module": Path(module.__file__).name,
                "layout": layout.to_json(),
                "node_by_node": gen.node_by_node,
                "python_calls": python_calls,
                "kernel_files": gen.kernel_files,
                "kernel_digest": files_digest(gen.kernel_files),
                "handover": handover.to_json() if handover is not None else None,
                "blas_macs": blas[0],
            },
            arrays,
        )
    except OSError as e:  # a read-only cache folder costs the next process a compile
        log.info("compiled backend: could not write the compile cache (%s)", e)
    return built


def _last_change(sizes: list[dict[tuple[str, str], Any]]) -> int:
    """The last step (from 1) whose sizes differ from the step before on a value both hold
    (0: none; a value that gets its first value is no change)."""
    for j in range(len(sizes) - 1, 0, -1):
        before, after = sizes[j - 1], sizes[j]
        if any(v is not None and before.get(k) not in (None, v) for k, v in after.items()):
            return j + 1
    return 0


def _growing(spec: CompileSpec, sizes: list[dict], shapes: list[dict]) -> str:
    """The field of the first value whose size differs between two steps (their ``sizes``),
    and its ``shapes`` in them."""
    before, after = sizes
    key = min(k for k, v in after.items() if v is not None and before.get(k) not in (None, v))
    nid, what = key
    group, name = what.split(":", 1)
    field = {"in": "input_ports", "fn": "functions", "out": "output_ports"}.get(group, "parameters")
    b, a = before[key], after[key]  # (sizes: a number, or one per item of a list or tuple)
    grows = not isinstance(a, tuple) and not isinstance(b, tuple) and a > b
    return (
        f"{spec.plan.nodes[nid].where}.{field}.{name} changes its shape from "
        f"{shapes[0][key]} to {shapes[1][key]} "
        + ("in the first steps (numpy broadcasting)" if grows else "from step to step")
    )


def _sizes(warm: Any, measure: Callable[[Any], Any] = np.size) -> dict[tuple[str, str], Any]:
    """The number of elements (or another ``measure``) of every value a warmed-up
    interpreter holds (per item for a list or tuple)."""

    def size(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return tuple(size(x) for x in v)
        return measure(v) if v is not None else None

    out: dict[tuple[str, str], Any] = {}
    for nid, st in warm.states.items():
        for group, values in (("in", st.inputs_read), ("fn", st.funcs), ("out", st.outputs)):
            for k, v in values.items():
                out[(nid, f"{group}:{k}")] = size(v)
        for k in st.params:
            out[(nid, "par:" + k)] = size(st.lookup(k))
    return out


_LOADED: dict[str, Any] = {}


def load_generated(source: str, table: ConstantTable) -> Any:
    """Write a generated module and its constant table (unless there already) and import it."""
    # (the engine's sources too: Numba's cache of a module of the same text compiled against
    # another version of the helpers it calls, e.g. pybuiltins, must not be loaded)
    digest = hashlib.sha256((source + engine_digest()).encode()).hexdigest()[:24]
    folder = cache_dir()
    path = folder / f"mdf_model_{digest}.py"
    if not path.exists():
        # the table first: a module file is only ever seen next to its table
        tmp = folder / f".tmp_{digest}_{os.getpid()}.npz"
        table.save(tmp)
        os.replace(tmp, path.with_suffix(".npz"))
        tmp = folder / f".tmp_{digest}_{os.getpid()}.py"
        tmp.write_text(source, encoding="utf-8")
        os.replace(tmp, path)
    return import_generated(path)


def import_generated(path: Path) -> Any:
    """Import a generated module (once per process); Numba loads its machine code from the
    cache next to it."""
    digest = path.stem.rsplit("_", 1)[-1]
    if str(path) in _LOADED:
        return _LOADED[str(path)]
    name = f"mdf_engine_generated_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _LOADED[str(path)] = module
    return module
