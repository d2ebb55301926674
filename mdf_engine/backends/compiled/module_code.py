"""The generated module: the whole-graph ``run`` loop, its quiet and batch forms, and the
node-by-node functions.

``run`` holds graph-scheduler's algorithm (from :mod:`mdf_engine.schedulers.codegen`) with every
node's body inlined, or a fixed order when every condition is a default; ``run_quiet`` is the
same without the schedule log; ``run_batch`` runs ``run_quiet`` once per row of a parameter
table in parallel. Every module is checked by :func:`.generated_source.check_source` before it
is written.
"""

from __future__ import annotations

import re

import numpy as np

from . import parts as parts_
from .draws import module_draws
from .generated_source import check_source
from .helpers import HELPERS
from .layout import Role, Slot, Storage, scalar_load, scalar_store
from .runtime import (
    BATCH_ARGS,
    ERR_WIDTH,
    INPUTS_ARGS,
    MAX_PASSES_PER_UPDATE,
    NODE_ARGS,
    RUN_ARGS,
    parameters,
)


class ModuleCodeEmitter:
    """The generated module: ``run``, ``run_quiet`` and ``run_batch`` (or the node functions
    and ``inputs``), the header, constant table and kernel globals, checked before use."""

    def source(self) -> str:
        """The generated module's source (checked by ``check_source``)."""
        if self.node_by_node is not None:
            return self.module_source([], [])
        init_keys = sorted(self.initializer)
        init_args = parameters(("I",), 0, len(init_keys))
        body: list[str] = []
        ind = "    "
        for slot in self.slots.values():
            if slot.kind is Storage.SCALAR:
                body.append(f"{ind}{slot.var} = {scalar_load(slot)}")
        body += self.sched.load(ind) + self.snapshot_flags(ind)
        body.append(f"{ind}q_quit = False")
        body.append(f"{ind}for step in range(nsteps):")
        ind2 = ind * 2
        body.append(f"{ind2}has_dt = dt_given and not (step == 0 and first_without_dt)")
        for k, key in enumerate(init_keys):
            targets = self._initializer_targets(key)
            for nid, port in targets:
                body += self.set_input(nid, port, init_args[k], ind2)
        if self.static is not None:
            body += self.static_step(self.static, ind2)
        else:
            body += self.scheduled_step(ind2)
        body.append(f"{ind2}q_c2 += 1")
        if self.record_columns:
            # (rec keeps the last rec.shape[0] steps: a sweep of final values passes one row)
            body.append(f"{ind2}q_rec = step - nsteps + rec.shape[0]")
            body.append(f"{ind2}if q_rec >= 0:")
            for (_nid, _name, col, _shape), slot in zip(self.record_columns, self.record_slots):
                if slot.kind is Storage.SCALAR:
                    body.append(f"{ind2}    rec[q_rec, {col}] = {slot.var}")
                else:
                    size = int(np.prod(slot.shape))
                    # element by element: a slice assignment compiles seconds longer
                    body += [
                        f"{ind2}    for k_ in range({size}):",
                        f"{ind2}        rec[q_rec, {col} + k_] = "
                        f"np.ascontiguousarray({slot.var}).reshape({size})[k_]",
                    ]
        body += self.write_back(ind)
        if self.static is not None:  # (only the locals it uses; a large loop in parts)
            loop = body.index(f"{ind}for step in range(nsteps):")
            body = parts_.localize(body, loop, self.parts, self._load_line, self._store_line)
        # (after the body: its held constants are array slots too)
        sig = parameters(RUN_ARGS, len(self.arrays), len(init_keys))
        return self.module_source(sig, objmode_entry(body) + body)

    def _scalar_slots(self) -> dict[str, Slot]:
        return {s.var: s for s in self.slots.values() if s.kind is Storage.SCALAR}

    def _load_line(self, var: str) -> str:
        """A local of ``run`` read from the state (a scalar slot or an ``ever`` flag)."""
        if var.startswith("q_ev"):
            return f"{var} = ever[{var[4:]}]"
        return f"{var} = {scalar_load(self._scalar_slots()[var])}"

    def _store_line(self, var: str) -> str:
        """A local of ``run`` written to the state."""
        if var.startswith("q_ev"):
            return f"ever[{var[4:]}] = {var}"
        return scalar_store(self._scalar_slots()[var], "")

    def static_schedule(self) -> list[list[int]] | None:
        """The fixed order of one update when every node runs under ``Always`` (or after one
        call of a node of an earlier consideration set) and the update ends when all have run
        (graph-scheduler's defaults): one time step per consideration set. None when the
        conditions make the order depend on the run (:func:`.static_sets`)."""
        from ...schedulers.compiled import static_sets  # (imports graph-scheduler)

        return static_sets(self.table, self.roots, self.term, self.queue, composite=True)

    def static_step(self, sets: list[list[int]], ind: str) -> list[str]:
        """One update of a graph with a fixed schedule, with no condition evaluated (and no
        log: :meth:`.schedule_log.ScheduleLog.decoded` writes it from the update count)."""
        out = [f"{ind}q_c0 = 1", f"{ind}q_c1 += 1"]
        nodes: list[parts_.NodeCode] = []
        for members in sets:
            for m in members:
                indexed = len(self.index_fields)
                lines = self.node_body(self.spec.node_ids[m], "        ")
                checked = self.spec.check_finite or len(self.index_fields) > indexed
                nodes.append(parts_.NodeCode(lines, checked))
        self.parts = parts_.split(nodes) if ind == "        " else None
        if self.parts:
            self.part_functions = [
                ln for p in self.parts for ln in parts_.function(p, self._with_locals)
            ]
            return out + [parts_.call(p, ind) for p in self.parts]
        for n in nodes:
            out += [ind + ln[8:] for ln in n.lines]
            if n.checked:
                # to the one write-back after the loop (a copy per node compiles slowly)
                out += [f"{ind}if err[0] != 0:", f"{ind}    break"]
        return out

    def write_back(self, ind: str) -> list[str]:
        """Code storing the scalar and scheduler locals into the state arrays (before every
        return)."""
        return [
            scalar_store(slot, ind) for slot in self.slots.values() if slot.kind is Storage.SCALAR
        ] + self.sched.store(ind)

    def scheduled_step(self, ind2: str) -> list[str]:
        """One update run by graph-scheduler's algorithm, written out by
        :class:`~mdf_engine.schedulers.codegen.SchedulerSource` with every node's body."""

        def body(m: int, ind: str) -> list[str]:
            indexed = len(self.index_fields)
            out = self.node_body(self.spec.node_ids[m], ind)
            if self.spec.check_finite or len(self.index_fields) > indexed:
                # out of the update's loop, then out of the step loop to the one write-back
                # after it (a copy of the write-back per node compiles slowly)
                out += [f"{ind}if err[0] != 0:", f"{ind}    q_quit = True", f"{ind}    break"]
            return out

        def give_up(ind: str) -> list[str]:
            return [*self.write_back(ind), f"{ind}return"]

        update = self.sched.update(body, give_up, MAX_PASSES_PER_UPDATE, ind2)
        return [*update, f"{ind2}if q_quit:", f"{ind2}    break"]

    def module_source(self, sig: list[str], body: list[str]) -> str:
        """The module around ``run`` (signature ``sig``, ``body``): ``run``, ``run_quiet`` and
        ``run_batch``, or the node functions when the schedule stays with graph-scheduler."""
        header = [
            '"""Generated by mdf_engine.backends.compiled for one MDF graph. Do not edit."""',
            "import math",
            "import numpy as np",
            "from numba import prange",
            "from mdf_engine.backends.compiled.pipeline import njit",
            "from numba import objmode",
            "from mdf_engine.backends.compiled.helpers import " + ", ".join(HELPERS),
            "from mdf_engine.backends.compiled.pybuiltins import _like, _list, _pymax, _pymin, _pywon",
            "from mdf_engine.backends.compiled.runtime import _jit, _python_kernel",
            "from mdf_engine.backends.compiled.draws import _draw",
        ]
        # globals are collected while the body is generated; the digest of the code the
        # generated function calls is part of the source, so a changed kernel gets new code
        # (Numba's cache of a caller does not notice changes in the functions it calls)
        header.insert(1, f"# kernels: {self.kernel_digest()}")
        if self.node_by_node is not None:
            functions = self.node_functions_source()
            return self._finish(header, functions)
        run = [
            "",
            "",
            "@njit(cache=True, error_model='numpy')",
            f"def run({', '.join(sig)}):",
            *body,
            "",
        ]
        # without the time-step log (long runs, sweeps): the same code with the log switched
        # off where Numba can see it; compiled only when first called
        quiet = [
            ln.replace("q_log = logpos[1] == 1", "q_log = False").replace(
                "def run(", "def run_quiet("
            )
            for ln in run
        ]
        return self._finish(header, self.part_functions + run + quiet + self.batch_source())

    def _finish(self, header: list[str], functions: list[str]) -> str:
        """The module: header, the constant table's names, kernel globals, ``functions``;
        checked to hold nothing but what the engine makes."""
        # the table's digest is part of the source: a module file (named by the source's
        # hash) and Numba's cache of it belong to one table
        lines = [
            *header[:2],
            f"# constants: {self.consts.table.digest()}",
            *header[2:],
            *self.consts.table.header(),
            *self.consts.globals,
            *functions,
            "",
        ]
        source = "\n".join(lines)
        check_source(source)
        return source

    def node_functions_source(self) -> list[str]:
        """Node by node (the schedule stays with graph-scheduler): ``node_<i>(dt, has_dt, S,
        a0.., ever, err, P, q_c2)`` runs node ``i`` on the compiled state; ``inputs(S, a0..,
        I0..)`` delivers the initializer."""
        bodies = [self.node_body(nid, "    ") for nid in self.spec.node_ids]
        body = []
        init_keys = sorted(self.initializer)
        for k, key in enumerate(init_keys):
            for nid, port in self._initializer_targets(key):
                body += self.set_input(nid, port, f"I{k}", "    ")
        if any("_iscalar(" in line for line in body):  # (integers in: the check cannot fail)
            body[:0] = ["    q_c2 = 0", f"    err = np.zeros({ERR_WIDTH}, dtype=np.int64)"]
        # (after the bodies: their held constants are array slots too)
        n_arrays, n_inits = len(self.arrays), len(self.initializer)
        out: list[str] = []
        for i, node in enumerate(bodies):
            sig = parameters(NODE_ARGS, n_arrays, n_inits)
            out += [
                "",
                "",
                "@njit(cache=True, error_model='numpy')",
                f"def node_{i}({', '.join(sig)}):",
                *self._with_locals(node),
            ]
        sig = parameters(INPUTS_ARGS, n_arrays, n_inits)
        out += [
            "",
            "",
            "@njit(cache=True, error_model='numpy')",
            f"def inputs({', '.join(sig)}):",
            *self._with_locals(body),
            "    return",
        ]
        return out

    def _with_locals(self, body: list[str]) -> list[str]:
        """``body`` with the scalar slots and ``ever`` flags it uses loaded into locals before
        and stored back after."""
        text = "\n".join(body)
        used = {int(m) for m in re.findall(r"\bs(\d+)\b", text)}
        scalars = sorted(
            (s for s in self.slots.values() if s.kind is Storage.SCALAR and s.index in used),
            key=lambda s: s.index,
        )
        ever = sorted({int(m) for m in re.findall(r"\bq_ev(\d+)\b", text)})
        return (
            objmode_entry(body)
            + [f"    {s.var} = {scalar_load(s)}" for s in scalars]
            + [f"    q_ev{m} = ever[{m}]" for m in ever]
            + body
            + [scalar_store(s, "    ") for s in scalars]
            + [f"    ever[{m}] = q_ev{m}" for m in ever]
        )

    def batch_source(self) -> list[str]:
        """``run_batch``: ``run`` from a cold state once per row of the parameter table, the
        rows spread over threads (each row owns its state)."""
        n = len(self.spec.node_ids)
        n_arrays, n_inits = len(self.arrays), len(self.initializer)
        arrays = parameters(("A",), n_arrays, n_inits)
        sig = parameters(BATCH_ARGS, n_arrays, n_inits)
        call = parameters(RUN_ARGS, n_arrays, n_inits, {"P": "PT[b]", "rec": "REC[b]"})
        ind, ind2 = "    ", "        "
        draws = module_draws(self.functions)  # (rows share the one stream: one by one)
        loop = "range" if draws else "prange"
        body = [f"{ind}for b in {loop}(PT.shape[0]):", f"{ind2}S = S0.copy()"]
        held = {s.var for k, s in self.slots.items() if k.role is Role.CONSTANT}
        body += [f"{ind2}{a} = {a}_0{'' if a in held else '.copy()'}" for a in arrays]
        body += [
            f"{ind2}useable = np.zeros(({n}, {n}), dtype=np.int64)",
            f"{ind2}total = np.zeros((3, {n}), dtype=np.int64)",
            f"{ind2}clock = np.zeros(7, dtype=np.int64)",
            f"{ind2}last_set = np.zeros({n}, dtype=np.bool_)",
            f"{ind2}ever = np.zeros({n}, dtype=np.bool_)",
            f"{ind2}thr = thr0.copy()",
            f"{ind2}logbuf = np.zeros(1, dtype=np.int64)",
            f"{ind2}logpos = np.zeros(2, dtype=np.int64)",
            f"{ind2}err = np.zeros({ERR_WIDTH}, dtype=np.int64)",
            f"{ind2}run_quiet({', '.join(call)})",
            f"{ind2}for k_ in range({ERR_WIDTH}):",
            f"{ind2}    ERR[b, k_] = err[k_]",
        ]
        return [
            "",
            "",
            f"@njit(cache=True, parallel={not draws}, error_model='numpy')",
            f"def run_batch({', '.join(sig)}):",
            *body,
            "",
        ]

    def _initializer_targets(self, key: str) -> list[tuple[str, str]]:
        """The (node, input port) pairs an initializer key sets, read as the interpreter
        reads it (``interpreter.initializer_targets``: ids with dots are never split blindly)."""
        from ...interpreter import initializer_targets

        return initializer_targets(self.plan, key)


def objmode_entry(body: list[str]) -> list[str]:
    """An empty object-mode block to open a function whose ``body`` has object-mode blocks
    (calls through Python). Numba lowers the pointer to the function's environment where it
    lowers the first such block and reuses it in the others; when that block sits in a branch
    (a node under a condition), LLVM rejects the function ("Instruction does not dominate all
    uses", numba/numba#9574). A first block that always runs makes the pointer dominate
    every use."""
    if any("with objmode(" in ln for ln in body):
        return ["    with objmode():", "        pass"]
    return []
