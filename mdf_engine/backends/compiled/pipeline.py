"""The ``njit`` of generated model code: Numba's nopython pipeline without SSA reconstruction.

Numba rebuilds the generated ``run`` in SSA form (``reconstruct_ssa``, then ``strip_phis``
before lowering) at a cost that grows with the number of variables assigned more than once
times the function's blocks: in ``run`` every scalar slot is a local assigned at each update,
so a 40-node chain spent a third of its compile there (docs/performance.md, helper
coldmid). The generated code gives every local one type (a slot's kind is fixed by the
warm-up, temporaries are assigned once per node), which is what SSA would give too, so
Numba's own pipeline with ``enable_ssa`` off (the form it uses for inlining) types and lowers
the same code. A ``parallel=True`` function (``run_batch``) keeps Numba's default pipeline:
its parfor passes expect SSA form.
"""

from __future__ import annotations

from typing import Any

from numba import njit as _numba_njit
from numba.core.compiler import Compiler


class NoSSACompiler(Compiler):
    """Numba's compiler with SSA reconstruction switched off for the function it compiles."""

    def define_pipelines(self) -> list:
        self.state.flags.enable_ssa = False
        return super().define_pipelines()


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with :class:`NoSSACompiler` (Numba's own for ``parallel=True``)."""
    if not options.get("parallel"):
        options.setdefault("pipeline_class", NoSSACompiler)
    return _numba_njit(*args, **options)
