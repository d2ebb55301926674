"""The compiled backend's way to run a graph whose schedule it cannot compile.

Some conditions have no compiled form (``NWhen``, conditions counted in
consideration set executions, ...). Such a graph keeps graph-scheduler, exactly as on the
interpreted backend, to decide which nodes run at every time step; each node it yields runs as
its own jitted function over the compiled state (the same node code as in a whole-graph
compiled loop). Conditions that read values (``Threshold``, ``WhenFinished``) read them from
that state. The schedule costs what it costs on the interpreted backend; the node bodies run as
machine code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...interpreter import InterpretedGraph
from .layout import output_key, value_key
from .runtime import ERR_WIDTH, INPUTS_ARGS, NODE_ARGS, arguments, initializer_args


class NodeByNodeGraph(InterpretedGraph):
    """graph-scheduler's schedule with every node run by its jitted function.

    ``owner`` is the :class:`~.graph.CompiledGraph` that holds the compiled state
    and reads values; ``module`` the generated module with ``node_<i>`` and ``inputs``."""

    def __init__(self, owner: Any, module: Any):
        # the node functions check NaN/inf themselves when the owner asks for it
        super().__init__(owner.plan, check_finite=False)
        self.owner = owner
        self.node_fns = [getattr(module, f"node_{i}") for i in range(len(owner.node_ids))]
        self.inputs_fn = module.inputs
        self.index = {nid: i for i, nid in enumerate(owner.node_ids)}

    def set_initializer(self, initializer: Mapping[str, Any] | None) -> None:
        if not initializer:
            return
        st = self.owner.compiled_state
        self.inputs_fn(*arguments(INPUTS_ARGS, {**st, "I": initializer_args(initializer)}))

    def run_node(self, nid: str, dt: float | None) -> None:
        st = self.owner.compiled_state
        err = np.zeros(ERR_WIDTH, dtype=np.int64)
        values = {
            **st,
            "dt": 0.0 if dt is None else float(dt),
            "has_dt": dt is not None,
            "err": err,
            "P": self.owner.sweep_values,
            "q_c2": self.evaluations,
        }
        self.owner.call_jitted(self.node_fns[self.index[nid]], *arguments(NODE_ARGS, values))
        self.owner.check_error(err)

    def threshold_value(self, node_id: str, name: str) -> Any:
        if node_id not in self.ever_ran:  # the values a graph that has not run reports
            return super().threshold_value(node_id, name)
        return self.owner.value(node_id, name)

    def is_finished(self, node_id: str) -> bool:
        if node_id not in self.ran_this_trial:
            return False
        plan = self.owner.plan.nodes[node_id]
        if any(pp.id == "is_finished" for pp in plan.parameters):
            key = value_key(node_id, "is_finished")
        elif any(oid == "is_finished" for oid, _ in plan.outputs):
            key = output_key(node_id, "is_finished")
        else:
            return True
        return bool(np.all(self.owner.slot_value(key)))
