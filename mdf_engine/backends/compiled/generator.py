"""The compiled backend's code generator: one warmed-up graph in, one Python module out.

:class:`Generator` holds the compiled state (a slot for every value, :mod:`.state`) and the
module's constants (:mod:`.constants`), and puts together the emitters of the generated code,
each a small class of its own module: calls (:mod:`.calls`), expression values
(:mod:`.values`), fused element-wise loops (:mod:`.elementwise`), one node's code
(:mod:`.node_code`) and the module around it (:mod:`.module_code`). What it generates from is a
:class:`~.build.CompileSpec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import MDFError, NotCompilable
from .build import CompileSpec
from .calls import CallEmitter, KernelKey
from .constants import Constants
from .elementwise import ElementwiseEmitter
from .layout import Layout, Slot, SlotKey, Storage, output_key, value_key
from .module_code import ModuleCodeEmitter
from .node_code import NodeCodeEmitter
from .pnl_rules import PsyNeuLinkRules
from .sharing import share_slots
from .state import CompiledState
from .values import ValueEmitter


class Generator(
    CallEmitter,
    ValueEmitter,
    ElementwiseEmitter,
    NodeCodeEmitter,
    ModuleCodeEmitter,
    PsyNeuLinkRules,
):
    """Writes the source of ``run`` for one warmed-up graph (``warm``: the interpreter that
    ran it until every node had run)."""

    def __init__(self, spec: CompileSpec, warm: Any, initializer: Mapping[str, Any] | None):
        from ...schedulers.codegen import SchedulerSource
        from ...schedulers.compiled import encode

        self.spec = spec
        self.swept = {key: k for k, key in enumerate(spec.swept)}
        self.plan = spec.plan
        self.interp = warm
        #: the model values the source names (``c<k>``) and the kernel globals
        self.consts = Constants()
        #: the constant table (saved beside the module)
        self.constants = self.consts.table
        #: the field of each bounds-checked subscript (``_ix1``/``_ix2``'s ``k``)
        self.index_fields: list[str] = []
        #: the global (``F<k>``, ``PY<k>``) of every kernel the module binds
        self.functions: dict[KernelKey, str] = {}
        self.initializer = dict(initializer or {})
        self.kernel_files: list[str] = []
        #: (name, since, namespace, shape) -> global of a function called through Python
        self.python_functions: dict[tuple, str] = {}
        self.node_index = {nid: i for i, nid in enumerate(spec.node_ids)}
        #: why the schedule stays with graph-scheduler (node functions only), or None
        self.node_by_node: str | None = None
        #: a large fixed-order loop's part functions (:mod:`.parts`), or None
        self.parts: list | None = None
        self.part_functions: list[str] = []
        try:
            table, roots, term, queue = encode(self.interp.scheduler, spec.node_ids)
            self.sched = SchedulerSource(
                table, roots, term, queue, len(spec.node_ids), self.constants.number
            )
        except NotCompilable as e:
            self.node_by_node = str(e)
            table, roots, term, queue = None, None, None, None
        self.table, self.roots, self.term, self.queue = table, roots, term, queue
        #: (node, name, indices) of the value each Threshold condition reads
        self.thresholds = table.thresholds if table is not None else []
        #: the slots of every value, and the state of a graph that has not run
        self.state = CompiledState(spec.plan, warm, self.initializer)
        self.slots: dict[SlotKey, Slot] = self.state.slots
        self.arrays: list[np.ndarray] = self.state.arrays
        self.consts.hold = self.state.hold  # (large arrays: read-only state, not frozen)
        self._check_call_inputs()
        self.static = self.static_schedule() if table is not None else None
        #: input ports that read their sender's output slot (:mod:`.sharing`)
        self.shared_inputs = share_slots(
            self.state, spec.plan, list(spec.node_ids), self.static, self.initialized_ports()
        )
        self.psyneulink_rules()
        #: (kind, name) of each value checked for NaN/inf, indexed by ``err[3]``
        self.finite_checks: list[tuple[str, str]] = []
        self.record_columns: list[tuple[str, str, int, tuple[int, ...]]] = []
        self.record_slots: list[Slot] = []  # the slot of each record column
        self.record_width = 0
        for nid, name in spec.recorded:
            key = output_key(nid, name)
            if key not in self.slots:
                key = value_key(nid, name)
            if key not in self.slots:
                raise MDFError(f"record '{nid}.{name}': no such port or parameter")
            slot = self.slots[key]
            if slot.kind is Storage.TUPLE:
                raise NotCompilable(f"record '{nid}.{name}': a tuple of values of mixed shapes")
            self.record_columns.append((nid, name, self.record_width, slot.shape))
            self.record_slots.append(slot)
            self.record_width += int(np.prod(slot.shape)) if slot.kind is Storage.ARRAY else 1

    def layout(self) -> Layout:
        """Where the generated code keeps every value, and what it reports."""
        return Layout(
            self.slots,
            self.static,
            self.finite_checks,
            self.record_columns,
            self.record_width,
            self.index_fields,
        )

    def cold_arrays(self, fresh: Any) -> dict[str, np.ndarray]:
        """The state of a graph that has not run (``fresh``: an interpreter that has not run)."""
        return self.state.cold_arrays(fresh, self.thresholds)
