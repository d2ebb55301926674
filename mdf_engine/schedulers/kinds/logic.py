"""Constant and composite conditions: Always, Never, All, Any, Not, NWhen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any as _Any

from .base import ConditionKind, cond, conds, count, kind


@kind("Always")
@dataclass(frozen=True)
class Always(ConditionKind):
    """Always satisfied: the node runs in every consideration set in which it is considered."""

    def code(self, w: _Any, owner: int) -> str:
        return "True"


@kind("Never")
@dataclass(frozen=True)
class Never(ConditionKind):
    """Never satisfied: the node never runs (as a termination condition: never ends)."""

    def code(self, w: _Any, owner: int) -> str:
        return "False"


@kind("All", "And")
@dataclass(frozen=True)
class All(ConditionKind):
    """Satisfied when every one of ``args`` is (with none: always). MDF files list them under
    ``dependencies`` or ``args``."""

    variadic = "args"
    args: tuple[ConditionKind, ...] = conds()

    def code(self, w: _Any, owner: int) -> str:
        parts = [c.code(w, owner) for c in self.args]
        return "(" + " and ".join(parts) + ")" if parts else "True"


@kind("Any", "Or")
@dataclass(frozen=True)
class Any(ConditionKind):
    """Satisfied when at least one of ``args`` is (with none: never)."""

    variadic = "args"
    args: tuple[ConditionKind, ...] = conds()

    def code(self, w: _Any, owner: int) -> str:
        parts = [c.code(w, owner) for c in self.args]
        return "(" + " or ".join(parts) + ")" if parts else "False"


@kind("Not")
@dataclass(frozen=True)
class Not(ConditionKind):
    """Satisfied when ``condition`` is not."""

    condition: ConditionKind = cond()

    def code(self, w: _Any, owner: int) -> str:
        return f"(not {self.condition.code(w, owner)})"


@kind("NWhen")
@dataclass(frozen=True)
class NWhen(ConditionKind):
    """Satisfied when ``condition`` is, for at most the first ``n`` times it is checked and
    satisfied; never after. Interpreted only (it keeps a count of its own)."""

    condition: ConditionKind = cond()
    n: int = count(default=1)
