"""What every condition kind is: a small frozen dataclass read by both backends.

A kind's fields are the keyword arguments MDF files give it (graph-scheduler's parameter
names), each with a *role* that tells the one parser (:mod:`mdf_engine.schedulers.parse`) how
to read it: a node id, a list of node ids, a nested condition, a list of them, a whole count, a
time scale, or a plain value. From there a kind is read in two ways:

* :meth:`ConditionKind.graph_scheduler` builds the ``graph_scheduler`` condition the interpreted
  backend runs (the bridge in :mod:`mdf_engine.schedulers.conditions` gives it nodes and
  getters);
* :meth:`ConditionKind.code` writes the boolean expression the compiled backend evaluates (the
  writer is :class:`mdf_engine.schedulers.codegen.SchedulerSource`), after
  :meth:`ConditionKind.register` has reserved any state the expression reads (a threshold's
  value, an absolute time).

Adding a condition is adding one such class to a module of this package and naming it with
:func:`kind`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import NotCompilable
from ..time_scales import TimeScale, to_graph_scheduler

if TYPE_CHECKING:  # (graph-scheduler is imported where a condition of its own is built)
    import graph_scheduler

#: MDF type name -> kind class (filled by :func:`kind`)
KINDS: dict[str, type[ConditionKind]] = {}

ESU = TimeScale.ENVIRONMENT_STATE_UPDATE
ES = TimeScale.ENVIRONMENT_SEQUENCE


def kind(*names: str):
    """Class decorator: the kind answers to ``names`` in MDF files (graph-scheduler's class
    names; the first is the class graph-scheduler builds, the others are its aliases)."""

    def register(cls: type[ConditionKind]) -> type[ConditionKind]:
        cls.names = names
        for name in names:
            if name in KINDS:
                raise ValueError(f"two condition kinds named {name}")
            KINDS[name] = cls
        return cls

    return register


# -- field roles -------------------------------------------------------------------------------
def node() -> Any:
    """A node id (graph-scheduler's ``dependency``)."""
    return field(metadata={"role": "node"})


def nodes() -> Any:
    """Node ids; none means every node of the graph where the kind says so."""
    return field(default=(), metadata={"role": "nodes"})


def cond() -> Any:
    """A nested condition."""
    return field(metadata={"role": "cond"})


def conds() -> Any:
    """Nested conditions."""
    return field(default=(), metadata={"role": "conds"})


def count(least: int = 0, default: Any = MISSING) -> Any:
    """A whole number of at least ``least``."""
    return field(default=default, metadata={"role": "count", "least": least})


def scale(default: TimeScale) -> Any:
    """A time scale (``TimeScale.PASS``, ``ENVIRONMENT_STATE_UPDATE``, ``TRIAL``, ...)."""
    return field(default=default, metadata={"role": "scale"})


def value(default: Any = MISSING) -> Any:
    """A plain value, passed on as the file gives it."""
    return field(default=default, metadata={"role": "value"})


@dataclass(frozen=True)
class ConditionKind:
    """A scheduling condition as MDF gives it, in one of graph-scheduler's kinds."""

    #: the MDF type names of this kind (set by :func:`kind`)
    names: ClassVar[tuple[str, ...]] = ()
    #: the field graph-scheduler takes as its positional ``*args`` (a list in MDF)
    variadic: ClassVar[str | None] = None

    @property
    def name(self) -> str:
        return self.names[0]

    def children(self) -> tuple[ConditionKind, ...]:
        """The nested conditions, in field order."""
        out: list[ConditionKind] = []
        for f in fields(self):
            role, v = f.metadata.get("role"), getattr(self, f.name)
            if role == "cond":
                out.append(v)
            elif role == "conds":
                out.extend(v)
        return tuple(out)

    def walk(self) -> Iterator[ConditionKind]:
        """This condition and every condition nested in it."""
        yield self
        for c in self.children():
            yield from c.walk()

    def check(self, graph: Any, where: str) -> None:
        """Checks of the model beyond what the field roles check (none by default)."""

    # -- the graph-scheduler bridge ------------------------------------------------------------
    def graph_scheduler(self, bridge: Any) -> graph_scheduler.Condition:
        """The graph-scheduler condition of this kind: its class called with the fields
        (nodes and nested conditions made by ``bridge``; fields left at None are not given)."""
        import graph_scheduler

        cls = getattr(graph_scheduler.condition, self.name)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            role = f.metadata.get("role")
            if role in ("node", "nodes", "cond", "conds"):
                v = bridge.resolve(v, role)
            elif role == "scale":
                v = to_graph_scheduler(v)
            if f.name == self.variadic:
                args = list(v)
            else:
                kwargs[f.name] = v
        return cls(*args, **kwargs)

    # -- the code generator --------------------------------------------------------------------
    def register(self, table: Any, owner: int) -> None:
        """Reserve the state this condition's code reads in ``table`` (a
        :class:`~mdf_engine.schedulers.compiled.ConditionTable`); ``owner`` is the node whose
        condition it is, -1 for a termination condition."""
        for c in self.children():
            c.register(table, owner)

    def code(self, w: Any, owner: int) -> str:
        """A Python boolean expression over the scheduler's counters that holds when this
        condition holds; ``w`` is the :class:`~mdf_engine.schedulers.codegen.SchedulerSource`
        that names them. Raises :class:`NotCompilable` for kinds the compiled loop lacks."""
        raise NotCompilable(f"{self.name} is not compiled")
