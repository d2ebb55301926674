"""The ``njit`` of generated model code: Numba's nopython pipeline without SSA reconstruction
first, Numba's own pipeline if that does not type.

Numba rebuilds a function in SSA form (``reconstruct_ssa``, then ``strip_phis`` before
lowering) at a cost that grows with the variables assigned more than once times the
function's blocks: in the generated ``run`` every scalar slot is a local assigned at each
update, so a 40-node chain spent a third of its compile there (docs/performance.md, helper
coldmid). Generated code mostly gives each local one kind (a slot's kind is fixed by the
warm-up), so Numba's pipeline with ``enable_ssa`` off (the form it uses for inlining) types
and lowers it. Where a local does take two kinds (a temporary that is the integer ``0`` in
one branch and a float in another), typing without SSA fails, and :class:`LeanCompiler`'s
second pipeline, Numba's default one on the function's bytecode, compiles it as before.
A ``parallel=True`` function (``run_batch``) keeps Numba's default compiler: its parfor
passes expect SSA form.
"""

from __future__ import annotations

from typing import Any

from numba import njit as _numba_njit
from numba.core.compiler import Compiler, DefaultPassBuilder
from numba.core.compiler_machinery import AnalysisPass, PassManager, register_pass


@register_pass(mutates_CFG=False, analysis_only=True)
class SSAOff(AnalysisPass):
    """Switch SSA off for the passes after it (some read the flag as they run; an analysis
    pass: it runs before the function has IR)."""

    _name = "mdf_engine_ssa_off"

    def __init__(self) -> None:
        AnalysisPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        state.flags.enable_ssa = False
        return False


@register_pass(mutates_CFG=False, analysis_only=True)
class SSAOn(AnalysisPass):
    """Switch SSA back on (Numba's default) for the second pipeline, and forget the first
    one's typing error (Numba raises a compile result's recorded error)."""

    _name = "mdf_engine_ssa_on"

    def __init__(self) -> None:
        AnalysisPass.__init__(self)

    def run_pass(self, state: Any) -> bool:
        state.flags.enable_ssa = True
        state.status.fail_reason = None
        return False


def _pipeline(state: Any, first: type, ssa: bool, name: str) -> PassManager:
    """Numba's nopython pipeline defined with ``enable_ssa`` = ``ssa``, after ``first``."""
    state.flags.enable_ssa = ssa
    pm = PassManager(name)
    pm.add_pass(first, "set enable_ssa")
    pm.passes.extend(DefaultPassBuilder.define_nopython_pipeline(state, name).passes)
    pm.finalize()
    return pm


class LeanCompiler(Compiler):
    """Numba's compiler trying the function without SSA reconstruction first. Each
    pipeline starts from the function's bytecode, so the second one (Numba's default, run
    when the first raises a Numba error) sees nothing of the first."""

    def define_pipelines(self) -> list:
        if self.state.flags.force_pyobject or self.state.func_ir is not None:
            return super().define_pipelines()  # (object mode; a lifted block's given IR)
        lean = _pipeline(self.state, SSAOff, False, "nopython_lean")
        full = _pipeline(self.state, SSAOn, True, "nopython")
        return [lean, full]


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with :class:`LeanCompiler` (Numba's own for ``parallel=True``)."""
    if not options.get("parallel"):
        options.setdefault("pipeline_class", LeanCompiler)
    return _numba_njit(*args, **options)
