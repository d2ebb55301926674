"""Conditions on the scheduler's own counts: passes, environment state updates, environment
sequences and consideration set executions (all counted from 0).

A *pass* is one walk over the consideration queue; an *environment state update* (a trial, one
``evaluate()``) runs passes until its termination condition holds; an *environment sequence*
(a run) is a series of updates; a *consideration set execution* (a time step) is one set of the
queue being considered, empty or not. A count "in ``time_scale``" restarts when that time
scale's unit begins (``ENVIRONMENT_SEQUENCE`` and ``LIFE`` are the same here: one
simulation is one environment sequence).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...errors import NotCompilable
from ..time_scales import TimeScale
from .base import ES, ESU, ConditionKind, count, kind, scale
from .logic import All


@dataclass(frozen=True)
class _Passes(ConditionKind):
    """The passes in ``time_scale`` compared with ``n``."""

    compare: ClassVar[str] = ""
    n: int = count()
    time_scale: TimeScale = scale(ESU)

    def passes(self, w: Any) -> str:
        """The counter of passes in ``time_scale``."""
        if self.time_scale not in (ESU, ES, TimeScale.LIFE):
            raise NotCompilable(f"{self.name} at time scale {self.time_scale}")
        return w.passes(self.time_scale)

    def code(self, w: Any, owner: int) -> str:
        return f"({self.passes(w)} {self.compare} {self.n})"


@kind("AtPass")
@dataclass(frozen=True)
class AtPass(_Passes):
    """Satisfied in pass ``n`` (of the current environment state update by default)."""

    compare = "=="


@kind("AfterPass")
@dataclass(frozen=True)
class AfterPass(_Passes):
    """Satisfied in every pass after pass ``n``."""

    compare = ">"


@kind("AfterNPasses")
@dataclass(frozen=True)
class AfterNPasses(_Passes):
    """Satisfied once ``n`` passes have been made (from pass ``n`` on)."""

    compare = ">="


@kind("BeforePass")
@dataclass(frozen=True)
class BeforePass(_Passes):
    """Satisfied in every pass before pass ``n``."""

    compare = "<"


@kind("EveryNPasses")
@dataclass(frozen=True)
class EveryNPasses(_Passes):
    """Satisfied in passes 0, ``n``, 2 ``n``, ..."""

    n: int = count(least=1)

    def code(self, w: Any, owner: int) -> str:
        return f"({self.passes(w)} % {self.n} == 0)"


@dataclass(frozen=True)
class _Updates(ConditionKind):
    """The environment state updates in ``time_scale`` compared with ``n``."""

    compare: ClassVar[str] = ""
    n: int = count()
    time_scale: TimeScale = scale(ES)

    def code(self, w: Any, owner: int) -> str:
        if self.time_scale not in (ES, TimeScale.LIFE):
            raise NotCompilable(f"{self.name} at time scale {self.time_scale}")
        return f"({w.updates()} {self.compare} {self.n})"


@kind("AtEnvironmentStateUpdate")
@dataclass(frozen=True)
class AtEnvironmentStateUpdate(_Updates):
    """Satisfied during environment state update ``n`` (of the environment sequence)."""

    compare = "=="


@kind("AfterEnvironmentStateUpdate")
@dataclass(frozen=True)
class AfterEnvironmentStateUpdate(_Updates):
    """Satisfied during every environment state update after update ``n``."""

    compare = ">"


@kind("AfterNEnvironmentStateUpdates")
@dataclass(frozen=True)
class AfterNEnvironmentStateUpdates(_Updates):
    """Satisfied once ``n`` environment state updates have ended (from update ``n`` on)."""

    compare = ">="


@kind("BeforeEnvironmentStateUpdate")
@dataclass(frozen=True)
class BeforeEnvironmentStateUpdate(_Updates):
    """Satisfied during every environment state update before update ``n``."""

    compare = "<"


@dataclass(frozen=True)
class _Sequences(ConditionKind):
    """The environment sequence's index compared with ``n``: one simulation is one
    environment sequence, whose index is always 0."""

    n: int = count()

    def holds(self, index: int) -> bool:
        raise NotImplementedError

    def code(self, w: Any, owner: int) -> str:
        return "True" if self.holds(0) else "False"


@kind("AtEnvironmentSequence")
@dataclass(frozen=True)
class AtEnvironmentSequence(_Sequences):
    """Satisfied during environment sequence ``n``."""

    def holds(self, index: int) -> bool:
        return index == self.n


@kind("AfterEnvironmentSequence")
@dataclass(frozen=True)
class AfterEnvironmentSequence(_Sequences):
    """Satisfied during every environment sequence after sequence ``n``."""

    def holds(self, index: int) -> bool:
        return index > self.n


@kind("AfterNEnvironmentSequences")
@dataclass(frozen=True)
class AfterNEnvironmentSequences(_Sequences):
    """Satisfied once ``n`` environment sequences have ended."""

    def holds(self, index: int) -> bool:
        return index >= self.n


@dataclass(frozen=True)
class _Sets(ConditionKind):
    """The consideration set executions (time steps, empty ones included) in ``time_scale``
    compared with ``n``."""

    compare: ClassVar[str] = ""
    n: int = count()
    time_scale: TimeScale = scale(ESU)

    def code(self, w: Any, owner: int) -> str:
        return f"({w.set_executions(self.time_scale, self.name)} {self.compare} {self.n})"


@kind("AtConsiderationSetExecution")
@dataclass(frozen=True)
class AtConsiderationSetExecution(_Sets):
    """Satisfied during consideration set execution ``n``."""

    compare = "=="


@kind("BeforeConsiderationSetExecution")
@dataclass(frozen=True)
class BeforeConsiderationSetExecution(_Sets):
    """Satisfied before consideration set execution ``n``."""

    compare = "<"


@kind("AfterConsiderationSetExecution")
@dataclass(frozen=True)
class AfterConsiderationSetExecution(_Sets):
    """Satisfied after consideration set execution ``n``."""

    compare = ">"


@kind("AfterNConsiderationSetExecutions")
@dataclass(frozen=True)
class AfterNConsiderationSetExecutions(_Sets):
    """Satisfied once ``n`` consideration sets have been executed."""

    compare = ">="


# -- the starts: graph-scheduler's shorthands, compiled as what they stand for --------------------
@kind("AtEnvironmentStateUpdateStart")
@dataclass(frozen=True)
class AtEnvironmentStateUpdateStart(ConditionKind):
    """Satisfied in the first pass of every environment state update (``AtPass(0)``)."""

    def code(self, w: Any, owner: int) -> str:
        return AtPass(0).code(w, owner)


@kind("AtEnvironmentStateUpdateNStart")
@dataclass(frozen=True)
class AtEnvironmentStateUpdateNStart(ConditionKind):
    """Satisfied in the first pass of environment state update ``n`` (counted in
    ``time_scale``)."""

    n: int = count()
    time_scale: TimeScale = scale(ES)

    def code(self, w: Any, owner: int) -> str:
        both = All((AtPass(0), AtEnvironmentStateUpdate(self.n, self.time_scale)))
        return both.code(w, owner)


@kind("AtEnvironmentSequenceStart")
@dataclass(frozen=True)
class AtEnvironmentSequenceStart(ConditionKind):
    """Satisfied during the first environment state update of the environment sequence."""

    def code(self, w: Any, owner: int) -> str:
        return AtEnvironmentStateUpdate(0, ES).code(w, owner)


@kind("AtEnvironmentSequenceNStart")
@dataclass(frozen=True)
class AtEnvironmentSequenceNStart(ConditionKind):
    """Satisfied during the first environment state update of environment sequence ``n``."""

    n: int = count()

    def code(self, w: Any, owner: int) -> str:
        both = All((AtEnvironmentStateUpdate(0), AtEnvironmentSequence(self.n)))
        return both.code(w, owner)
