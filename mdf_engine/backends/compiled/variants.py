"""Values whose kind is the argument Python's ``max()``/``min()`` chose (docs/compiled.md,
"Values of the argument max/min chose").

Python's ``max(a, b)`` returns the winning object itself, so where its arguments differ in
kind its value's dtype and shape follow the numbers: PsyNeuLink's DriftDiffusionIntegrator
clips a float ``(1, 1)`` value with ``max``/``min`` against an integer threshold ``[100]``,
and the interpreter's value is that float ``(1, 1)`` below the threshold, the int64 ``(1,)``
threshold once clipped. Such a value is a *variant*: it has a list of alternatives (dtype
and shape; every alternative holds one number, as ``max`` of arrays needs), its numbers live
in one slot of a storage kind that holds each of them exactly (numpy's promotion of the
alternatives' dtypes, the shape of the one with most axes), and a scalar *tag* slot
(:attr:`~.layout.Role.WON`) holds which alternative the value is now. Generated code sets
the tag wherever it sets the value: from which argument won (``_pywon``), from the tag of
the variant it copies, or from the kind of the constant or value it copies; reading the
value back (``layout.read_slot``) gives the interpreter's object in that alternative's
dtype and shape.

:func:`find_variants` finds them from the plan and the warm-up's values, before any slot is
allocated: a function or output whose value is a chain of ``max``/``min`` calls over
arguments of different kinds, and every value that copies one (a bare name, a tuple holding
it, a constant index of such a tuple, a parameter whose new value is one; a stateful
parameter adds its initial value's kind). Every other expression that reads a variant must
give a value of one kind whichever alternative it reads (the interpreter is asked, with the
warm-up's numbers in each alternative's kind): ``x + rate * v`` of a float ``v`` does, ``x *
2`` of an int64 or float ``x`` does not, and such a graph runs interpreted with a log line
naming the field. A variant sent along an edge, or read by anything the analysis does not
follow, is refused alike.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import NotCompilable
from ...expressions.closures import ClosureBuilder
from ...plan import GraphPlan, ValuePlan
from .layout import Role, Slot, SlotKey, Storage, output_key, scalar_bits, scalar_dtype, value_key

#: a value's kind: dtype name and shape
Kind = tuple[str, tuple[int, ...]]

_PICKS = ("max", "min")


@dataclass
class Variant:
    """A variant value's alternatives (the tag's values index them), and where its value is a
    ``max``/``min`` chain the kind (an index into ``alts``) or the variant key of each leaf
    argument, left to right."""

    alts: list[Kind]
    leaves: list[Kind | SlotKey] = field(default_factory=list)


def kind(value: Any) -> Kind | None:
    """The kind of a number or numeric array of one element, else None."""
    if isinstance(value, (list, tuple, str)) or value is None:
        return None
    a = np.asarray(value)
    if a.dtype.kind not in "biuf" or a.size != 1:
        return None
    return (a.dtype.name, tuple(a.shape))


def storage_kind(alts: list[Kind]) -> Kind:
    """The kind a variant's numbers are held in: the dtype every alternative's casts to
    exactly (numpy's promotion), the shape of the alternative with most axes."""
    dtype = np.result_type(*(np.dtype(d) for d, _ in alts)).name
    shape = max((s for _, s in alts), key=len)
    return (dtype, shape)


def sample(value: Any, k: Kind) -> Any:
    """``value``'s one number in kind ``k``."""
    a = np.asarray(value).reshape(-1)[:1].astype(k[0]).reshape(k[1])
    return a if k[1] else a.dtype.type(a.reshape(()))


def signature(value: Any) -> Any:
    """What must not change with the alternative a value reads: dtypes and shapes (items of a
    tuple or list each), or the type of anything else."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(signature(x) for x in value))
    if isinstance(value, (np.ndarray, np.generic, bool, int, float)):
        a = np.asarray(value)
        return (a.dtype.name, a.shape, isinstance(value, np.ndarray))
    return type(value).__name__


def _body(vp: ValuePlan | None) -> ast.AST | None:
    return vp.expr.tree.body if vp is not None and vp.expr is not None else None


def _is_pick(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _PICKS
        and len(node.args) >= 2
        and not node.keywords
    )


def _leaves(node: ast.AST) -> Iterator[ast.AST]:
    """The arguments of a ``max``/``min`` chain, left to right (``max(a, b, c)`` is folded
    left as the generated code folds it)."""
    for a in node.args:
        if _is_pick(a):
            yield from _leaves(a)
        else:
            yield a


class _Node:
    """The analysis of one node: its warm-up values and the variants found so far."""

    def __init__(self, nid: str, plan: Any, st: Any):
        self.nid, self.plan = nid, plan
        self.env: dict[str, Any] = {}
        for ip in plan.inputs:
            self.env[ip.id] = st.inputs_read.get(ip.id)
        for pp in plan.parameters:
            self.env[pp.id] = st.lookup(pp.id)
        for fid, _ in plan.functions:
            self.env[fid] = st.funcs[fid]
        self.found: dict[SlotKey, Variant] = {}

    def key(self, name: str) -> SlotKey:
        return value_key(self.nid, name)

    def ref(self, node: ast.AST) -> SlotKey | None:
        """The variant a bare name or a constant index of a tuple names, else None."""
        if isinstance(node, ast.Name) and self.key(node.id) in self.found:
            return self.key(node.id)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int
        ):
            key = self.key(node.value.id).item(node.slice.value)
            return key if key in self.found else None
        return None

    def reads(self, node: ast.AST) -> set[str]:
        """The names of variants (or of tuples holding one) that ``node`` reads."""
        held = {k.name for k in self.found if k.node == self.nid and k.role is Role.VALUE}
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in held}

    def choices(self, name: str) -> list[Any]:
        """The warm-up value of ``name`` in each kind it may have (a tuple holding a variant:
        in each combination of its items' alternatives)."""
        value = self.env.get(name)
        whole = self.found.get(self.key(name))
        if whole is not None:
            ks = [*whole.alts, storage_kind(whole.alts)]
            return [sample(value, k) for k in ks]
        if not isinstance(value, (list, tuple)):
            return [value]
        items = []
        for i, x in enumerate(value):
            v = self.found.get(self.key(name).item(i))
            items.append(
                [x] if v is None else [sample(x, k) for k in [*v.alts, storage_kind(v.alts)]]
            )
        return [type(value)(c) for c in itertools.product(*items)]

    def evaluate_all(self, node: ast.AST, env: Mapping[str, Any]) -> set[Any] | None:
        """The signatures of ``node``'s value with every variant it reads in each of its
        kinds; None when it cannot be evaluated so (a registered function, an error)."""
        names = sorted(self.reads(node))
        try:
            fn = ClosureBuilder({}, "", "").build(node)
            out = set()
            for combo in itertools.product(*(self.choices(n) for n in names)):
                with np.errstate(all="ignore"):
                    out.add(signature(fn({**env, **dict(zip(names, combo))})))
            return out
        except Exception:  # noqa: BLE001 - any failure: the value is not followed
            return None

    def classify(self, key: SlotKey, vp: ValuePlan | None, env: Mapping[str, Any]) -> bool:
        """Record ``key`` as a variant when ``vp`` makes it one; whether that changed."""
        node = _body(vp)
        if node is None:
            return False
        src = self.ref(node)
        if src is not None:
            return self._add(key, Variant(list(self.found[src].alts)))
        if isinstance(node, (ast.Tuple, ast.List)):
            changed = False
            for i, e in enumerate(node.elts):
                src = self.ref(e)
                if src is not None:
                    changed |= self._add(key.item(i), Variant(list(self.found[src].alts)))
            return changed
        if not _is_pick(node):
            return False
        alts: list[Kind] = []
        leaves: list[Kind | SlotKey] = []
        for leaf in _leaves(node):
            src = self.ref(leaf)
            if src is not None:
                leaves.append(src)
                alts += [k for k in self.found[src].alts if k not in alts]
                continue
            sigs = self.evaluate_all(leaf, env)
            if sigs is None or len(sigs) != 1:
                return False
            k = kind(ClosureBuilder({}, "", "").build(leaf)(env))
            if k is None:
                return False
            leaves.append(k)
            alts += [k] if k not in alts else []
        if len(alts) < 2 and key not in self.found:
            return False
        return self._add(key, Variant(alts, leaves))

    def _add(self, key: SlotKey, v: Variant) -> bool:
        old = self.found.get(key)
        if old is not None:
            v.alts = old.alts + [k for k in v.alts if k not in old.alts]
            v.leaves = v.leaves or old.leaves  # (an initial value adds a kind, no leaves)
        if old is not None and old.alts == v.alts and old.leaves == v.leaves:
            return False
        self.found[key] = v
        return True

    def call_env(self, cp: Any) -> dict[str, Any] | None:
        """The names a function's ``value`` sees: the node's and its evaluated args."""
        fp = dict(self.env)
        try:
            for name, v in cp.args:
                fp[name] = v.evaluate(fp)
        except Exception:  # noqa: BLE001
            return None
        return fp

    def sweep(self) -> bool:
        """One pass over the node in the interpreter's order; whether anything changed."""
        changed = False
        for fid, cp in self.plan.functions:
            if cp.schema is None and cp.value is not None:
                fp = self.call_env(cp)
                if fp is not None:
                    changed |= self.classify(self.key(fid), cp.value, fp)
        for pp in self.plan.parameters:
            if pp.value is None or pp.conditions or pp.call is not None:
                continue
            key = self.key(pp.id)
            changed |= self.classify(key, pp.value, self.env)
            if key in self.found and pp.stateful and pp.initial is not None:
                k = kind(self.initial(pp))
                if k is None:
                    raise NotCompilable(f"{self.plan.where}.parameters.{pp.id}: its initial value")
                changed |= self._add(key, Variant([k]))
        for oid, vp in self.plan.outputs:
            changed |= self.classify(output_key(self.nid, oid), vp, self.env)
        return changed

    def initial(self, pp: Any) -> Any:
        return pp.initial.evaluate(self.env)

    def check_uses(self) -> None:
        """Every expression that reads a variant other than as a copy gives one kind."""
        w = self.plan.where
        sites: list[tuple[str, SlotKey | None, ValuePlan | None, Mapping[str, Any] | None]] = []
        for fid, cp in self.plan.functions:
            if cp.schema is None:
                sites.append((f"functions.{fid}", self.key(fid), cp.value, self.call_env(cp)))
            for name, v in cp.args:
                sites.append((f"functions.{fid}.args.{name}", None, v, self.env))
        for pp in self.plan.parameters:
            base = f"parameters.{pp.id}"
            key = self.key(pp.id)
            for part, vp in (("", pp.value), (".time_derivative", pp.derivative)):
                sites.append((base + part, None if part else key, vp, self.env))
            sites.append((base + ".default_initial_value", None, pp.initial, self.env))
            for _cid, test, val in pp.conditions:
                sites += [(base + ".conditions", None, test, self.env)]
                sites += [(base + ".conditions", None, val, self.env)]
            if pp.call is not None:
                for name, v in pp.call.args:
                    sites.append((f"{base}.args.{name}", None, v, self.env))
        for oid, vp in self.plan.outputs:
            sites.append((f"output_ports.{oid}", output_key(self.nid, oid), vp, self.env))
        for what, key, vp, env in sites:
            node = _body(vp)
            if node is None or not self.reads(node):
                continue
            if key is not None and (key in self.found or key.item(0) in self.found):
                if self.ref(node) is not None or _is_pick(node):
                    continue
                if isinstance(node, (ast.Tuple, ast.List)) and all(
                    self.ref(e) is not None or not self.reads(e) for e in node.elts
                ):
                    continue
            sigs = self.evaluate_all(node, env or self.env)
            if sigs is None or len(sigs) != 1:
                raise NotCompilable(
                    f"{w}.{what}: reads a value whose kind is the argument max()/min() chose, "
                    "and its own kind would follow it"
                )


def find_variants(plan: GraphPlan, warm: Any) -> dict[SlotKey, Variant]:
    """The variants of a warmed-up graph (see the module docstring); NotCompilable naming the
    field when one is read in a way whose kind would follow it."""
    found: dict[SlotKey, Variant] = {}
    for nid, np_ in plan.nodes.items():
        if not _has_pick(np_):
            continue
        node = _Node(nid, np_, warm.states[nid])
        for _ in range(8):
            if not node.sweep():
                break
        else:
            raise NotCompilable(f"{np_.where}: the kinds max()/min() may give do not settle")
        node.check_uses()
        found.update(node.found)
    outs = {(k.node, k.name) for k in found if k.role is Role.OUTPUT}
    for edges in plan.incoming.values():
        for ep in edges:
            if (ep.sender, ep.sender_port) in outs:
                raise NotCompilable(
                    f"{plan.nodes[ep.sender].where}.output_ports.{ep.sender_port}: its kind "
                    "is the argument max()/min() chose, and an edge sends it"
                )
    return found


def _has_pick(np_: Any) -> bool:
    vps = [cp.value for _, cp in np_.functions] + [pp.value for pp in np_.parameters]
    vps += [vp for _, vp in np_.outputs]
    return any(
        any(_is_pick(n) for n in ast.walk(b)) for b in (_body(vp) for vp in vps) if b is not None
    )


def allocate_variant(state: Any, key: SlotKey, v: Variant, value: Any, what: str) -> Slot:
    """The slot of variant ``key`` in ``state`` (a :class:`~.state.CompiledState`): its
    numbers in the storage kind, its tag slot set to the warm-up value's alternative."""
    k = kind(value)
    if k not in v.alts:
        raise NotCompilable(f"{what}: a kind max()/min() does not give ({k})")
    dtype, shape = storage_kind(v.alts)
    held = np.asarray(value).astype(dtype).reshape(shape)
    if shape:
        slot = Slot(Storage.ARRAY, len(state.arrays), shape)
        state.arrays.append(held)
    else:
        sd = scalar_dtype(held)
        slot = Slot(Storage.SCALAR, len(state.scalars), dtype=sd)
        state.scalars.append(scalar_bits(held, sd))
    tag = Slot(Storage.SCALAR, len(state.scalars))
    state.scalars.append(float(v.alts.index(k)))
    state.slots[SlotKey(key.node, Role.WON, key.name, key.part)] = tag
    slot.alts = [(d, tuple(s)) for d, s in v.alts]
    slot.won = tag.index
    state.slots[key] = slot
    return slot


def read_variant(number: Any, slot: Slot, tag: float) -> Any:
    """A variant's value as the interpreter holds it: ``number`` (its storage's value) in
    the kind of alternative ``tag``."""
    dtype, shape = slot.alts[int(tag)]
    a = np.asarray(number).astype(dtype).reshape(shape)
    return a if shape else a.dtype.type(a.reshape(()))


def _mapped(src: Slot, dst: Slot) -> str:
    """Code giving ``dst``'s tag for the alternative ``src``'s tag names."""
    tag = f"s{src.won}"
    if dst.alts[: len(src.alts)] == src.alts:
        return tag
    out = repr(float(dst.alts.index(src.alts[-1])))
    for i in range(len(src.alts) - 2, -1, -1):
        out = f"({float(dst.alts.index(src.alts[i]))!r} if {tag} == {float(i)!r} else {out})"
    return out


def _fixed(dst: Slot, k: Kind | None, what: str) -> str:
    if k not in dst.alts:
        raise NotCompilable(f"{what}: a kind max()/min() does not give ({k})")
    return repr(float(dst.alts.index(k)))


def assign_variant(gen: Any, dst: Slot, expr: str, ind: str) -> str:
    """Code storing ``expr`` into the variant slot ``dst`` and setting its tag (see the
    module docstring); NotCompilable when ``dst`` is not a variant but ``expr`` is one (an
    edge, a snapshot: code the analysis does not follow)."""
    key = next(k for k, s in gen.slots.items() if s is dst)
    what = gen.slot_field(dst) if key.role is not Role.SNAPSHOT else str(key)
    src = gen.slot_of_var.get(expr)
    if not dst.alts:
        raise NotCompilable(f"{what}: copies a value whose kind is the argument max()/min() chose")
    pre: list[str] = []
    if src is not None and src.alts:
        tag = _mapped(src, dst)
    elif src is not None:
        k = (gen.slot_dtype(src), tuple(src.shape)) if src.kind is not Storage.TUPLE else None
        tag = _fixed(dst, k, what)
    elif gen.consts.is_array(expr) or (expr[:1] == "c" and expr[1:].isdigit()):
        tag = _fixed(dst, kind(gen.consts.table.values[int(expr[1:])]), what)
    else:
        tree = ast.parse(expr, mode="eval").body
        leaves = gen.state.variants[key].leaves
        if not _is_generated_pick(tree) or not leaves:
            raise NotCompilable(
                f"{what}: a value whose kind is the argument max()/min() chose, set by code "
                "the compiled backend does not follow"
            )
        names = iter(range(len(leaves)))
        found: list[ast.AST] = []

        def bind(node: ast.AST) -> ast.AST:
            if _is_generated_pick(node):
                node.args = [bind(a) for a in node.args]
                return node
            j = next(names, None)
            if j is None:
                raise NotCompilable(f"{what}: max()/min() arguments do not match")
            found.append(node)
            name = f"t_{dst.won}_{j}_0_0"
            pre.append(f"{ind}{name} = {ast.unparse(node)}")
            return ast.Name(id=name, ctx=ast.Load())

        tree = bind(tree)
        if len(found) != len(leaves):
            raise NotCompilable(f"{what}: max()/min() arguments do not match")
        counter = iter(range(len(leaves)))
        k = len(gen.index_fields)  # (an integer beyond 2**53 winning stops the run: err -7)
        gen.index_fields.append(what)

        def tag_of(node: ast.AST) -> str:
            if _is_generated_pick(node):
                a, b = node.args
                greater = node.func.id == "_pymax"
                return (
                    f"_pywon({ast.unparse(a)}, {ast.unparse(b)}, {tag_of(a)}, "
                    f"{tag_of(b)}, {greater}, {k}, q_c2, err)"
                )
            leaf = leaves[next(counter)]
            if isinstance(leaf, SlotKey):
                return _mapped(gen.slots[leaf], dst)
            return _fixed(dst, leaf, what)

        tag = tag_of(tree)
        expr = ast.unparse(tree)
    return "\n".join([*pre, gen.plain_assign(dst, expr, ind), f"{ind}s{dst.won} = {tag}"])


def _is_generated_pick(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("_pymax", "_pymin")
        and len(node.args) == 2
    )
