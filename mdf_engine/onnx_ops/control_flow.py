"""Control-flow operators ``If``, ``Loop`` and ``Scan``, their bodies run by :mod:`.graph`.

A body (``then_branch``, ``else_branch``, ``body``) may be given in two forms:

* an ONNX ``GraphProto`` (as in an ONNX file): it is run with
  :func:`mdf_engine.onnx_ops.graph.run_graph` at the opset the operator was called with;
* a Python callable ``body(*inputs) -> sequence of outputs``, taking and returning values
  positionally in the order the ONNX body signature prescribes. This is how an MDF subgraph (or
  any Python function) is used as a body; :func:`.graph.bind_subgraph` makes such a callable
  from a ``GraphProto`` bound to an outer scope, which is what ``run_graph`` passes for nested
  control flow.

Body signatures (ONNX):

* ``If``: ``branch() -> outputs``;
* ``Loop``: ``body(iteration_num, cond, *loop_carried) -> (cond, *loop_carried, *scan_outputs)``;
  scan outputs are stacked along a new first axis;
* ``Scan`` (opset >= 9): ``body(*states, *scan_slices) -> (*states, *scan_output_slices)``;
  ``Scan`` opset 8 has a leading batch axis on every input and an optional ``sequence_lens``.

Because a ``GraphProto`` body must run at the caller's opset, each operator is registered once
per opset (from its first version to the newest ONNX opset), each registration remembering its
opset. With a callable body and no iteration, ``Loop``/``Scan`` cannot know how many scan
outputs there would be and return none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import MDFError
from ..registry import REQUIRED
from . import onnx_op
from .graph import bind_subgraph

_NEWEST_OPSET = 28
try:  # the newest opset the installed onnx knows, if it is installed
    import onnx.defs as _defs

    _NEWEST_OPSET = max(_NEWEST_OPSET, int(_defs.onnx_opset_version()))
except Exception:  # pragma: no cover - onnx is optional
    pass


def _as_body(body: Any, opset: int | None, what: str) -> Callable[..., Sequence[Any]]:
    if callable(body):
        return body
    if hasattr(body, "node") and hasattr(body, "output"):
        return bind_subgraph(body, opset, None)
    raise MDFError(f"{what} must be an ONNX GraphProto or a callable, not {type(body).__name__}")


def _scalar_bool(x: Any, what: str) -> bool:
    a = np.asarray(x)
    if a.size != 1:
        raise MDFError(f"{what} must hold exactly one value, got shape {a.shape}")
    return bool(a.reshape(-1)[0])


def _empty_outputs(body: Any, count_from: int) -> list[np.ndarray]:
    """Empty scan outputs of a GraphProto body that never ran (dtype from its declared type)."""
    graph = getattr(body, "graph", body)
    outs = getattr(graph, "output", None)
    if outs is None:
        return []
    from onnx import helper

    res = []
    for o in list(outs)[count_from:]:
        try:
            dt = helper.tensor_dtype_to_np_dtype(o.type.tensor_type.elem_type)
        except Exception:
            dt = np.float32
        dims = [d.dim_value for d in o.type.tensor_type.shape.dim]
        res.append(np.zeros((0, *dims), dtype=dt))
    return res


def _stack(items: list[Any]) -> Any:
    if items and isinstance(items[0], list):
        raise MDFError("Loop/Scan: a scan output must be a tensor, not a sequence")
    return np.stack([np.asarray(x) for x in items])


# --------------------------------------------------------------------------------------- If
def _make_if(opset: int) -> Callable[..., tuple]:
    def if_(cond: Any, *, then_branch: Any, else_branch: Any) -> tuple:
        """ONNX If: runs ``then_branch`` when ``cond`` is true, else ``else_branch``; returns
        that branch's outputs."""
        chosen = then_branch if _scalar_bool(cond, "If: cond") else else_branch
        outs = _as_body(chosen, opset, "If branch")()
        return tuple(outs)

    return if_


# ------------------------------------------------------------------------------------- Loop
def _make_loop(opset: int) -> Callable[..., tuple]:
    def loop(M: Any = None, cond: Any = None, *v_initial: Any, body: Any) -> tuple:
        """ONNX Loop: ``for i in range(M) while cond`` over the loop-carried values; returns the
        final loop-carried values then the scan outputs stacked along a new axis 0."""
        fn = _as_body(body, opset, "Loop body")
        trip = None if M is None else int(np.asarray(M).reshape(-1)[0])
        keep = True if cond is None else _scalar_bool(cond, "Loop: cond")
        state = list(v_initial)
        n_state = len(state)
        scans: list[list[Any]] | None = None
        i = 0
        while keep and (trip is None or i < trip):
            outs = list(fn(np.array(i, dtype=np.int64), np.array(keep), *state))
            if len(outs) < 1 + n_state:
                raise MDFError(
                    f"Loop body must return cond and {n_state} loop-carried values, "
                    f"returned {len(outs)} values"
                )
            keep = _scalar_bool(outs[0], "Loop body's cond output")
            state = outs[1 : 1 + n_state]
            if scans is None:
                scans = [[] for _ in outs[1 + n_state :]]
            for k, x in enumerate(outs[1 + n_state :]):
                scans[k].append(x)
            i += 1
        if scans is None:
            return (*state, *_empty_outputs(body, 1 + n_state))
        return (*state, *[_stack(s) for s in scans])

    return loop


# ------------------------------------------------------------------------------------- Scan
def _norm_axes(axes: Any, ranks: list[int], what: str) -> list[int]:
    if axes is None or len(axes) == 0:
        return [0] * len(ranks)
    axes = [int(a) for a in axes]
    if len(axes) != len(ranks):
        raise MDFError(f"Scan: {what} must give one axis per tensor ({len(ranks)}), got {axes}")
    out = []
    for a, r in zip(axes, ranks):
        if not -r <= a < r:
            raise MDFError(f"Scan: {what} axis {a} is out of range for rank {r}")
        out.append(a + r if a < 0 else a)
    return out


def _dirs(dirs: Any, n: int, what: str) -> list[int]:
    if dirs is None or len(dirs) == 0:
        return [0] * n
    if len(dirs) != n:
        raise MDFError(f"Scan: {what} must give one direction per tensor ({n}), got {list(dirs)}")
    return [int(d) for d in dirs]


def _scan_core(
    fn: Callable,
    states: list[Any],
    xs: list[np.ndarray],
    in_axes: list[int],
    in_dirs: list[int],
    out_axes: Any,
    out_dirs: Any,
    body: Any,
) -> tuple:
    n_state = len(states)
    lengths = {x.shape[a] for x, a in zip(xs, in_axes)}
    if len(lengths) > 1:
        raise MDFError(f"Scan: scan inputs disagree on the sequence length: {sorted(lengths)}")
    T = lengths.pop() if lengths else 0
    scans: list[list[Any]] | None = None
    for t in range(T):
        slices = [
            np.take(x, (T - 1 - t) if d else t, axis=a) for x, a, d in zip(xs, in_axes, in_dirs)
        ]
        outs = list(fn(*states, *slices))
        if len(outs) < n_state:
            raise MDFError(f"Scan body must return {n_state} state values, returned {len(outs)}")
        states = outs[:n_state]
        if scans is None:
            scans = [[] for _ in outs[n_state:]]
        for k, y in enumerate(outs[n_state:]):
            scans[k].append(np.asarray(y))
    if scans is None:
        return (*states, *_empty_outputs(body, n_state))
    o_dirs = _dirs(out_dirs, len(scans), "scan_output_directions")
    o_axes = _norm_axes(out_axes, [s[0].ndim + 1 for s in scans], "scan_output_axes")
    res = []
    for s, a, d in zip(scans, o_axes, o_dirs):
        if d:
            s = s[::-1]
        res.append(np.stack(s, axis=a))
    return (*states, *res)


def _make_scan(opset: int) -> Callable[..., tuple]:
    def scan(
        *inputs: Any,
        body: Any,
        num_scan_inputs: int,
        scan_input_axes: Any = None,
        scan_input_directions: Any = None,
        scan_output_axes: Any = None,
        scan_output_directions: Any = None,
    ) -> tuple:
        """ONNX Scan (opset >= 9): runs ``body`` once per slice of the scan inputs along their
        scan axes, carrying the state values; scan outputs are stacked along their axes."""
        fn = _as_body(body, opset, "Scan body")
        m = int(num_scan_inputs)
        if not 0 < m <= len(inputs):
            raise MDFError(f"Scan: num_scan_inputs={m} but {len(inputs)} inputs were given")
        states = list(inputs[: len(inputs) - m])
        xs = [np.asarray(x) for x in inputs[len(inputs) - m :]]
        in_axes = _norm_axes(scan_input_axes, [x.ndim for x in xs], "scan_input_axes")
        in_dirs = _dirs(scan_input_directions, m, "scan_input_directions")
        return _scan_core(
            fn, states, xs, in_axes, in_dirs, scan_output_axes, scan_output_directions, body
        )

    return scan


def _scan8(
    sequence_lens: Any = None, *inputs: Any, body: Any, num_scan_inputs: int, directions: Any = None
) -> tuple:
    """ONNX Scan opset 8: like later Scan, with a leading batch axis on every state and scan
    input (scan axis 1) and an optional per-batch ``sequence_lens``; shorter sequences' scan
    outputs are padded with zeros."""
    fn = _as_body(body, 8, "Scan body")
    m = int(num_scan_inputs)
    n_state = len(inputs) - m
    states = [np.asarray(s) for s in inputs[:n_state]]
    xs = [np.asarray(x) for x in inputs[n_state:]]
    batch = xs[0].shape[0]
    T = xs[0].shape[1]
    lens = (
        np.full(batch, T, dtype=np.int64)
        if sequence_lens is None
        else np.asarray(sequence_lens).reshape(-1).astype(np.int64)
    )
    dirs = _dirs(directions, m, "directions")
    per_batch = []
    for b in range(batch):
        L = int(lens[b])
        res = _scan_core(
            fn, [s[b] for s in states], [x[b, :L] for x in xs], [0] * m, dirs, None, None, body
        )
        per_batch.append(res)
    outs = []
    for k in range(len(per_batch[0])):
        parts = [np.asarray(r[k]) for r in per_batch]
        if k >= n_state:
            width = max(p.shape[0] for p in parts)
            parts = [
                np.concatenate([p, np.zeros((width - p.shape[0], *p.shape[1:]), p.dtype)])
                if p.shape[0] < width
                else p
                for p in parts
            ]
        outs.append(np.stack(parts))
    return tuple(outs)


for _v in range(1, _NEWEST_OPSET + 1):
    onnx_op(
        "If",
        inputs=("cond",),
        attributes={"then_branch": REQUIRED, "else_branch": REQUIRED},
        outputs=("outputs",),
        since=_v,
        python_only=True,
    )(_make_if(_v))
    onnx_op(
        "Loop",
        inputs=("M", "cond", "v_initial"),
        optional=("M", "cond"),
        variadic=True,
        attributes={"body": REQUIRED},
        outputs=("v_final_and_scan_outputs",),
        since=_v,
        python_only=True,
    )(_make_loop(_v))
    if _v >= 9:
        onnx_op(
            "Scan",
            inputs=("initial_state_and_scan_inputs",),
            variadic=True,
            attributes={
                "body": REQUIRED,
                "num_scan_inputs": REQUIRED,
                "scan_input_axes": None,
                "scan_input_directions": None,
                "scan_output_axes": None,
                "scan_output_directions": None,
            },
            outputs=("final_state_and_scan_outputs",),
            since=_v,
            python_only=True,
        )(_make_scan(_v))
onnx_op(
    "Scan",
    inputs=("sequence_lens", "initial_state_and_scan_inputs"),
    optional=("sequence_lens",),
    variadic=True,
    attributes={"body": REQUIRED, "num_scan_inputs": REQUIRED, "directions": None},
    outputs=("final_state_and_scan_outputs",),
    since=8,
    python_only=True,
)(_scan8)
