"""Conditions on what other nodes did: call counts, JustRan, WhenFinished, Threshold.

A node's *calls* in a time scale are the times it ran since that time scale's current unit
began (this pass, this environment state update, this environment sequence or ever); a
consideration set execution counts like a pass (graph-scheduler resets both together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ...errors import MDFError, NotCompilable
from ..time_scales import TimeScale
from .base import ESU, ConditionKind, count, kind, node, nodes, scale, value

if TYPE_CHECKING:  # (imported where graph-scheduler's own condition is built)
    import graph_scheduler

#: the comparators of ``Threshold`` the compiled backend writes out
COMPARATORS = ("<", "<=", ">", ">=", "==", "!=")


def _is_zero(i: Any) -> bool:
    try:
        return int(i) == 0
    except (TypeError, ValueError):
        return False


def threshold_number(value: Any, indices: Any, what: str) -> float:
    """The number a ``Threshold`` compares: ``value`` at ``indices``, which must hold one
    element (a one-element array, such as PsyNeuLink's ``[x]`` at index 0, is that element, as
    graph-scheduler's ``float()`` took it); ``what`` names the value (``node.parameter``)."""
    v = value
    for i in indices if indices is not None else ():
        if np.ndim(v) == 0 and np.size(v) == 1 and _is_zero(i):
            continue  # PsyNeuLink's [[x]] at (0, 0) where the value is held as x
        try:
            v = np.asarray(v)[int(i)]
        except (IndexError, TypeError, ValueError):
            raise MDFError(
                f"Threshold on '{what}': index {i!r} of indices {list(indices)} does not fit "
                f"a value of shape {np.shape(v)}"
            ) from None
    a = np.asarray(v)
    if a.size != 1 or a.dtype.kind not in "biuf":
        raise MDFError(
            f"Threshold on '{what}' compares one number, but the value"
            f"{'' if indices is None else f' at indices {list(indices)}'} has shape {a.shape}"
            f"{'' if a.dtype.kind in 'biuf' else f' and dtype {a.dtype}'}"
        )
    return float(a.reshape(-1)[0])


@kind("EveryNCalls")
@dataclass(frozen=True)
class EveryNCalls(ConditionKind):
    """Satisfied when ``dependency`` has run at least ``n`` times since the owner node last
    ran (in this environment state update): with ``n`` = 2, the owner runs once for every
    two runs of ``dependency``. graph-scheduler's default for a node with senders is
    ``EveryNCalls(sender, 1)`` (``All`` of them for several senders)."""

    dependency: str = node()
    n: int = count(least=1)

    def code(self, w: Any, owner: int) -> str:
        since = w.calls_since(w.node(self.dependency), owner % w.n)
        return f"({since} >= {self.n})"


@dataclass(frozen=True)
class _CallCount(ConditionKind):
    """The calls of ``dependency`` in ``time_scale`` compared with ``n``."""

    compare: ClassVar[str] = ""
    dependency: str = node()
    n: int = count()
    time_scale: TimeScale = scale(ESU)

    def code(self, w: Any, owner: int) -> str:
        return f"({w.calls(self.time_scale, w.node(self.dependency))} {self.compare} {self.n})"


@kind("AfterNCalls")
@dataclass(frozen=True)
class AfterNCalls(_CallCount):
    """Satisfied once ``dependency`` has run at least ``n`` times in ``time_scale``."""

    compare = ">="


@kind("AtNCalls")
@dataclass(frozen=True)
class AtNCalls(_CallCount):
    """Satisfied while ``dependency`` has run exactly ``n`` times in ``time_scale``."""

    compare = "=="


@kind("BeforeNCalls")
@dataclass(frozen=True)
class BeforeNCalls(_CallCount):
    """Satisfied while ``dependency`` has run fewer than ``n`` times in ``time_scale``."""

    compare = "<"


@kind("AfterCall")
@dataclass(frozen=True)
class AfterCall(_CallCount):
    """Satisfied once ``dependency`` has run more than ``n`` times in ``time_scale`` (after
    its call number ``n``, counting from 0)."""

    compare = ">"


@kind("AfterNCallsCombined")
@dataclass(frozen=True, kw_only=True)
class AfterNCallsCombined(ConditionKind):
    """Satisfied once the ``dependencies`` together have run at least ``n`` times in
    ``time_scale``."""

    variadic = "dependencies"
    dependencies: tuple[str, ...] = nodes()
    n: int = count()
    time_scale: TimeScale = scale(ESU)

    def code(self, w: Any, owner: int) -> str:
        calls = [w.calls(self.time_scale, w.node(d)) for d in self.dependencies]
        return f"({' + '.join(calls) if calls else '0'} >= {self.n})"


@kind("AllHaveRun")
@dataclass(frozen=True)
class AllHaveRun(ConditionKind):
    """Satisfied once every one of ``dependencies`` (none given: every node) has run at least
    once in ``time_scale``. graph-scheduler's default end of an environment state update."""

    variadic = "dependencies"
    dependencies: tuple[str, ...] = nodes()
    time_scale: TimeScale = scale(ESU)

    def code(self, w: Any, owner: int) -> str:
        deps = [w.node(d) for d in self.dependencies] or w.all_nodes()
        return w.all_ran(self.time_scale, deps)


@kind("JustRan")
@dataclass(frozen=True)
class JustRan(ConditionKind):
    """Satisfied when ``dependency`` ran in the last consideration set that was executed."""

    dependency: str = node()

    def graph_scheduler(self, bridge: Any) -> graph_scheduler.Condition:
        # graph-scheduler's own JustRan fails (IndexError) when it is asked before the first
        # time step; the bridge's refuses that in one line
        return bridge.just_ran(self.dependency)

    def code(self, w: Any, owner: int) -> str:
        return w.just_ran(w.node(self.dependency))


@dataclass(frozen=True)
class _Finished(ConditionKind):
    """A node is finished when it ran in this environment state update and, if it has an
    ``is_finished`` parameter or output port, that value is true (non-zero)."""

    join: ClassVar[str] = " and "

    def _deps(self) -> tuple[str, ...]:
        return ()

    def register(self, table: Any, owner: int) -> None:
        for d in self._deps() or table.node_ids():
            if table.finish_value(d) is not None:
                table.threshold_slot(d, table.finish_value(d), None)

    def code(self, w: Any, owner: int) -> str:
        parts = []
        for d in self._deps() or w.table.node_ids():
            ran = w.ran_in_update(w.node(d), owner)
            flag = w.table.finish_value(d)
            if flag is not None:
                is_set = w.compare(w.threshold(d, flag, None), "!=", 0.0, 0.0, 0.0)
                ran = f"({ran} and {is_set})"
            parts.append(ran)
        if not parts:
            return "False" if self.join == " or " else "True"
        return "(" + self.join.join(parts) + ")"


@kind("WhenFinished")
@dataclass(frozen=True)
class WhenFinished(_Finished):
    """Satisfied when ``dependency`` is finished (see :class:`_Finished`)."""

    dependency: str = node()

    def _deps(self) -> tuple[str, ...]:
        return (self.dependency,)


@kind("WhenFinishedAny")
@dataclass(frozen=True)
class WhenFinishedAny(_Finished):
    """Satisfied when at least one of ``dependencies`` (none given: of all nodes) is
    finished."""

    variadic = "dependencies"
    join = " or "
    dependencies: tuple[str, ...] = nodes()

    def _deps(self) -> tuple[str, ...]:
        return self.dependencies


@kind("WhenFinishedAll")
@dataclass(frozen=True)
class WhenFinishedAll(_Finished):
    """Satisfied when every one of ``dependencies`` (none given: every node) is finished."""

    variadic = "dependencies"
    dependencies: tuple[str, ...] = nodes()

    def _deps(self) -> tuple[str, ...]:
        return self.dependencies


@kind("Threshold")
@dataclass(frozen=True)
class Threshold(ConditionKind):
    """Satisfied when the current value of ``parameter`` (a port, parameter or function) of
    node ``dependency``, at ``indices`` if given, compares with ``threshold`` as
    ``comparator`` says (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``; equality within
    ``atol + rtol * |threshold|``)."""

    dependency: str = node()
    parameter: str = value()
    threshold: Any = value()
    comparator: str = value()
    indices: Any = value(None)
    atol: float = value(0)
    rtol: float = value(0)

    def check(self, graph: Any, where: str) -> None:
        n = graph.get_node(self.dependency)
        kinds = ("input_ports", "parameters", "functions", "output_ports")
        if not any(n.get(k, self.parameter) for k in kinds):
            raise MDFError(
                f"node '{self.dependency}' has no port, parameter or function '{self.parameter}'",
                f"{where}.kwargs.parameter",
            )
        if self.comparator not in COMPARATORS:
            raise MDFError(
                f"expected one of {', '.join(COMPARATORS)}, got {self.comparator!r:.80}",
                f"{where}.kwargs.comparator",
            )
        for name in ("threshold", "atol", "rtol"):  # numbers: a text would fail mid-run
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
                raise MDFError(f"expected a number, got {v!r:.80}", f"{where}.kwargs.{name}")

    def graph_scheduler(self, bridge: Any) -> graph_scheduler.Condition:
        getter = bridge.value_getter
        indices = self.indices

        def number(d: Any, p: str) -> float:
            return threshold_number(getter(str(d), p), indices, f"{d}.{p}")

        # the indices are applied by ``number`` (graph-scheduler's own float() of a
        # one-element array fails on numpy 2.4)
        import graph_scheduler

        return graph_scheduler.Threshold(
            bridge.node(self.dependency),
            self.parameter,
            self.threshold,
            self.comparator,
            indices=None,
            atol=self.atol,
            rtol=self.rtol,
            custom_parameter_getter=number,
            custom_parameter_validator=lambda d, p: True,
        )

    def register(self, table: Any, owner: int) -> None:
        if self.comparator not in COMPARATORS:
            raise NotCompilable(f"Threshold comparator {self.comparator!r}")
        t = self.threshold
        if isinstance(t, (int, np.integer)) and float(t) != int(t):
            # (Python compares a float with an int exactly; compiled code rounds the int)
            raise NotCompilable("a Threshold's integer threshold beyond 2**53")
        table.threshold_slot(self.dependency, self.parameter, self.indices)

    def code(self, w: Any, owner: int) -> str:
        x = w.threshold(self.dependency, self.parameter, self.indices)
        t, atol, rtol = float(self.threshold), float(self.atol), float(self.rtol)
        return w.compare(x, self.comparator, t, atol, rtol)
