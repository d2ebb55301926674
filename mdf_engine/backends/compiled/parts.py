"""A large fixed-order ``run`` split into part functions of bounded size.

Numba hands LLVM one function for ``run``; LLVM's scalar replacement (SROA) and the
function passes after it take time that grows with the function's stack slots times its
blocks, both of which grow with the graph: a 40-node ONNX-like DAG of 3-vector ops spent
3.1 CPU s in them, an 80-node one 31 s (docs/performance.md, helper dagc). So the node
bodies of a graph with a fixed schedule (``static_sets``) whose loop holds many branches are
grouped, in schedule order, into functions ``part_<j>`` of at most :data:`PART_BLOCKS`
branches each, which ``run`` calls in turn. Each part loads the scalar slots and ``ever``
flags it uses from the state arrays and stores them back (as a node-by-node function does),
takes only the array slots it uses (so its arguments stay bounded), and has no Python or C
entry point of its own (it is only called from ``run``). ``run`` keeps in locals only the
scalars and flags its own code still uses, written to the state before a part that uses
them and read again after it.

A graph below :data:`SPLIT_ABOVE` branches is generated as one function, as before (its
run, tier 0 and its machine code are unchanged); so is one whose node bodies read locals of
``run`` other than the scalar slots and flags (PsyNeuLink's snapshots, Threshold values).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: a graph's fixed-order loop with more branches (if/for/while/with lines and kernel calls
#: of its node bodies) than this is split into part functions
SPLIT_ABOVE = 160
#: the most branches of one part function (a node with more is a part of its own)
PART_BLOCKS = 80

_BRANCH = re.compile(r"^\s*(?:if |elif |else:|for |while |with )|\b(?:F|PY)\d+\(|\b_put\(")
_SCALAR = re.compile(r"\bs(\d+)\b")
_EVER = re.compile(r"\bq_ev(\d+)\b")
_ARRAY = re.compile(r"\ba(\d+)\b")
_INIT = re.compile(r"\bI(\d+)\b")
_RUN_LOCAL = re.compile(r"\bq_(?!ev\d+\b|c2\b|once\b)[a-z]+\d*(?:_\d+)?\b")
#: names of ``run`` a node body may not read inside a part (``dt``, ``has_dt``, ``P``,
#: ``q_c2``, ``S``, ``ever`` and ``err`` are the part's own arguments)
_RUN_ONLY = frozenset(
    "step nsteps dt_given first_without_dt useable total clock last_set thr logbuf logpos "
    "rec rng".split()
)


@dataclass(frozen=True)
class NodeCode:
    """One node's code in the loop (indented for a part's body) and whether an error it
    may raise ends the update (``err[0]`` checked after it)."""

    lines: list[str]
    checked: bool

    @property
    def branches(self) -> int:
        """The if/for/while/with lines and kernel calls: what makes LLVM's blocks."""
        return sum(1 for ln in self.lines if _BRANCH.search(ln))


@dataclass(frozen=True)
class Part:
    """A part function: its number, the nodes' code, and what it reads of ``run``."""

    index: int
    nodes: list[NodeCode]

    @property
    def text(self) -> str:
        return "\n".join(ln for n in self.nodes for ln in n.lines)

    @property
    def checked(self) -> bool:
        return any(n.checked for n in self.nodes)

    def arrays(self) -> list[str]:
        """The array slots and initializer arguments (read directly by an input port) the
        part reads or writes, in index order: its arguments besides the state's."""
        text = self.text
        return [f"a{k}" for k in sorted({int(m) for m in _ARRAY.findall(text)})] + [
            f"I{k}" for k in sorted({int(m) for m in _INIT.findall(text)})
        ]

    def synced(self, held: set[str]) -> list[str]:
        """The locals of ``run`` (``held``) that this part reads or writes."""
        used = {f"s{m}" for m in _SCALAR.findall(self.text)}
        used |= {f"q_ev{m}" for m in _EVER.findall(self.text)}
        return sorted(used & held, key=_natural)


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    return head, int(name[len(head) :])


def split(nodes: Sequence[NodeCode]) -> list[Part] | None:
    """The nodes' code grouped into parts, in order; None when the loop is small enough to
    stay one function, or when a node body reads a local of ``run`` a part cannot have."""
    if sum(n.branches for n in nodes) <= SPLIT_ABOVE:
        return None
    for n in nodes:
        text = "\n".join(n.lines)
        if _RUN_LOCAL.search(text) or _free_names(n.lines) & _RUN_ONLY:
            return None
    parts: list[Part] = []
    group: list[NodeCode] = []
    blocks = 0
    for n in nodes:
        if group and blocks + n.branches > PART_BLOCKS:
            parts.append(Part(len(parts), group))
            group, blocks = [], 0
        group.append(n)
        blocks += n.branches
    if group:
        parts.append(Part(len(parts), group))
    return parts


def _free_names(lines: list[str]) -> set[str]:
    """The names the code mentions."""
    text = textwrap.dedent("\n".join(lines))
    try:
        tree = ast.parse(text)
    except SyntaxError:  # (a body that does not parse alone: keep it in ``run``)
        return set(_RUN_ONLY)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def function(part: Part, with_locals: Callable[[list[str]], list[str]]) -> list[str]:
    """The source of ``part_<j>``: the nodes' code in a loop of one round (an error leaves
    it to the stores after it), between the loads and stores ``with_locals`` adds."""
    sig = ["dt", "has_dt", "S", *part.arrays(), "ever", "err", "P", "q_c2"]
    body = ["    for q_once in range(1):"]
    for n in part.nodes:
        body += n.lines
        if n.checked:
            body += ["        if err[0] != 0:", "            break"]
    # (a part calling through Python keeps Numba's entry points: its object-mode blocks
    # reach the function's environment through them)
    entry = (
        "" if "with objmode(" in part.text else ", no_cpython_wrapper=True, no_cfunc_wrapper=True"
    )
    return [
        "",
        "",
        f"@njit(cache=True, error_model='numpy'{entry})",
        f"def part_{part.index}({', '.join(sig)}):",
        *with_locals(body),
    ]


def call(part: Part, ind: str) -> str:
    """``run``'s call of a part (its locals synchronised later by :func:`localize`)."""
    args = ["dt", "has_dt", "S", *part.arrays(), "ever", "err", "P", "q_c2"]
    return f"{ind}part_{part.index}({', '.join(args)})"


_CALL = re.compile(r"^(\s*)part_(\d+)\(")
_LOCAL = re.compile(r"\b(?:s\d+|q_[a-z]+\d*(?:_\d+)?)\b")
_ASSIGN = re.compile(r"^    (s\d+|q_[a-z]+\d*(?:_\d+)?) = (.*)$")
_STORE = re.compile(r"^    \S.* = (s\d+|q_[a-z]+\d*(?:_\d+)?)$")


def localize(
    body: list[str],
    loop: int,
    parts: list[Part] | None,
    load: Callable[[str], str],
    store: Callable[[str], str],
) -> list[str]:
    """``run``'s ``body`` (a fixed-order loop starting at line ``loop``) keeping in locals
    only what its own lines use: a scalar slot, flag or scheduler counter read from the state
    before the loop and written back after it, and used by no line of the loop, is neither
    (each such local is one more stack slot LLVM's passes carry through every block). Around
    each part call, the locals the part uses too are stored before it and loaded after it
    (``load``/``store``: the one line for a name)."""
    inner = [ln for ln in body[loop + 1 :] if ln.startswith("        ") and not _CALL.match(ln)]
    held = set(_LOCAL.findall("\n".join(inner)))
    for ln in body[:loop]:
        m = _ASSIGN.match(ln)
        held |= set(_LOCAL.findall(m.group(2) if m else ln))
    out: list[str] = []
    for k, ln in enumerate(body):
        if k < loop:
            m = _ASSIGN.match(ln)
        elif not ln.startswith("        "):
            m = _STORE.match(ln)
        else:
            m = None
        if m and m.group(1) not in held:
            continue
        c = _CALL.match(ln)
        if c is None or parts is None:
            out.append(ln)
            continue
        part = parts[int(c.group(2))]
        synced = part.synced(held)
        ind = c.group(1)
        out += [ind + store(v) for v in synced]
        out.append(ln)
        out += [ind + load(v) for v in synced]
        if part.checked:
            out += [f"{ind}if err[0] != 0:", f"{ind}    break"]
    return out
