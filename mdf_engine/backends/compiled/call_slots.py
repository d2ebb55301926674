"""What a call of a registered function in generated code gets besides its arguments, decided
from the slots and the warm-up (a base of :class:`.calls.CallEmitter`): the parts a Split
writes into, whether a Cast's constant ``to`` is a dtype its slot holds, and the 0-d inputs a
call through Python gets back in the warm-up's dtype (a uint8 zero point held as an int64
number)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MDFError
from ...onnx_ops.cast import onnx_dtype
from ...plan import CallPlan
from .layout import Slot, Storage


class CallSlots:
    """Decisions of a call's code from its slots (``self.slots``, ``self.interp``,
    ``self.consts`` and ``slot_dtype`` are the generator's)."""

    def warm_env(self, nid: str) -> dict[str, Any]:
        """The values of node ``nid``'s inputs, parameters and functions in the warm-up."""
        st = self.interp.states[nid]
        return {
            **st.inputs_read,
            **{k: st.lookup(k) for k in st.params},
            **{k: v for k, v in st.funcs.items() if v is not None},
        }

    def narrow_numbers(self, cp: CallPlan, slot: Slot | None) -> dict[int, str]:
        """The inputs of a call (by position) that the warm-up gave as a 0-d value of a dtype a
        number slot holds as another (a uint8 zero point Cast from an integer, held as int64):
        their dtype names. A call through Python gets them back in that dtype."""
        nid = next((k.node for k, s in self.slots.items() if s is slot), None)
        if nid is None or not cp.input_names:
            return {}
        fp = self.warm_env(nid)
        try:
            for name, vp in cp.args:
                fp[name] = vp.evaluate(fp)
        except Exception:  # noqa: BLE001 - (checked by _check_call_inputs already)
            return {}
        out = {}
        for i, name in enumerate(cp.input_names):
            v = fp.get(name) if name is not None else None
            if isinstance(v, (np.ndarray, np.generic)) and v.ndim == 0 and v.dtype.kind in "biuf":
                if v.dtype.name not in ("float64", "int64", "bool", "uint64", "float16"):
                    out[i] = v.dtype.name
        return out

    def parts_of(self, slot: Slot | None) -> str | None:
        """For a kernel registered with ``jit_parts=True`` (Split: its value is a tuple of
        parts whose number and lengths follow from values), the slots it writes its parts into,
        passed last: a tuple slot's array parts as a tuple, one array slot as a tuple of one,
        or an array slot whose first axis are the parts; None for another kind (then Python
        calls it)."""
        if slot is None or slot.alts:
            return None
        if slot.kind is Storage.ARRAY:
            return slot.var if slot.seq else f"({slot.var}, )"
        if slot.kind is Storage.TUPLE and all(
            p.kind is Storage.ARRAY and not p.seq and not p.alts for p in slot.parts
        ):
            return "(" + "".join(f"{p.var}, " for p in slot.parts) + ")"
        return None

    def dtype_not_held(self, cp: CallPlan, slot: Slot | None) -> bool:
        """A kernel registered with ``jit_dtype=ATTR`` (Cast: ``to``) whose ``ATTR`` is a
        constant naming a data type that ``slot`` holds as another (a uint8 or float16 result
        in an int64 number slot or a float32 array): its kernel would refuse it at run time
        (and a first run restart interpreted), so the compiled loop calls it through Python,
        which converts it as the warm-up did. A value ``ATTR`` is the kernel's to check."""
        attr = cp.schema.extra.get("jit_dtype")
        if attr is None or slot is None or slot.kind not in (Storage.ARRAY, Storage.SCALAR):
            return False
        given = dict(cp.args).get(attr)
        if given is not None and given.expr is not None:
            return False
        to = given.const if given is not None else cp.schema.attributes.get(attr)
        if to is None:
            return False  # (EyeLike's: the input's dtype)
        if isinstance(to, (str, bytes)):
            return True  # (a type name: the kernel takes ONNX type numbers only)
        try:
            want = onnx_dtype(to).name
        except (MDFError, TypeError, ValueError):
            return True  # (the Python kernel says what is wrong)
        held = self.slot_dtype(slot)
        return want != held and not (slot.kind is Storage.SCALAR and want == "float32")
