"""mdf_engine.compat's element classes and helpers used on their own, against modeci-mdf's
``execution_engine`` (the oracle, run in the same test with the same arguments):
EvaluableParameter (with conditions, against a dict of values), EvaluableFunction,
EvaluableInput, EvaluableOutput, evaluate_expr and get_required_variables_from_expression."""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pytest

from mdf_engine import compat
from mdf_engine import model as ours_model
from mdf_engine.errors import MDFError

ee = pytest.importorskip("modeci_mdf.execution_engine")
mdf = pytest.importorskip("modeci_mdf.mdf")


def quiet(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


def same(ours, ref):
    """Equal values (as the reference's tests compare them) of the same kind."""
    if isinstance(ref, (list, np.ndarray)):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref))
        assert isinstance(ours, type(ref)) or isinstance(ref, list) and isinstance(ours, list)
    else:
        assert ours == ref or (np.isnan(ref) and np.isnan(ours))
        assert isinstance(ours, type(ref)), (type(ours), type(ref))  # np.float64 is a float


# The cases of the reference suite's tests/test_parameters.py, and a few more
# (value, parameters, cond_test, cond_value, default_initial_value)
PARAMETER_CASES = [
    ("3+4", {}, None, None, None),
    ("3+x", {"x": 3}, None, None, None),
    ("[x,4]", {"x": 3}, None, None, None),
    ([1, 2], {"x": 3}, None, None, None),
    ("a+b", {"a": np.array([1, 2]), "b": np.array([1, 2])}, None, None, None),
    (np.array([1, 2]), {"x": 2}, None, None, None),
    ("x*y", {"x": 2, "y": np.array([1, 2])}, None, None, None),
    ("x*y", {"x": np.array([1, 2]), "y": np.array([1, 2])}, None, None, None),
    ("x*0.5", {"x": 4}, None, None, None),
    ("math.sqrt(x) + numpy.sin(0)", {"x": 9.0}, None, None, None),
    (0, {"x": 3}, "x<4", 1, None),
    (0, {"x": 3}, "x<1", 1, None),
    (0, {"x": 3}, "x==3", 1, None),
    (0, {"x": 3}, "x==3 and x<=5", 1, None),
    (2, {"x": 3}, "x<4", 3, None),
    (0.6, {"x": 3}, "x>=4", 1.6, None),
    ("y+z", {"x": 3, "y": 2, "z": 3}, "x>y", "z", None),
    (np.array([2, 2]), {"x": np.array([1, 0]), "y": np.array([0, 1])}, "x>y", [3, 3], None),
    (np.array([0, 0]), {"x": np.array([1, 1]), "y": np.array([0, 0])}, "y<x", [1, 1], None),
    # a stateful parameter sees its own current value among the node's values
    ("p1 + 1", {"x": 3, "p1": 4}, None, None, 5),
    ("p1 + x", {"x": 3, "p1": 200}, "p1 > 100", 0, None),
]


def _parameters(value, cond_test, cond_value, initial, dict_conditions=False):
    """The same parameter as a modeci-mdf Parameter and as an mdf_engine one."""
    made = []
    for m in (mdf, ours_model):
        p = m.Parameter(id="p1", value=value)
        if initial is not None:
            p.default_initial_value = initial
        if cond_test:
            pc = (
                {"id": "pc", "test": cond_test, "value": cond_value}
                if dict_conditions
                else m.ParameterCondition(id="pc", test=cond_test, value=cond_value)
            )
            p.conditions.append(pc)
        made.append(p)
    return made


@pytest.mark.parametrize("dict_conditions", [False, True])
@pytest.mark.parametrize("value, parameters, cond_test, cond_value, initial", PARAMETER_CASES)
def test_evaluable_parameter_with_conditions_against_a_dict(
    value, parameters, cond_test, cond_value, initial, dict_conditions
):
    """evaluate(dict) then get_current_value(dict) (which must not evaluate again), for a
    modeci-mdf Parameter and for ours; conditions as objects and as the dicts loading gives."""
    ref_p, our_p = _parameters(value, cond_test, cond_value, initial, dict_conditions)
    ref = ee.EvaluableParameter(ref_p, verbose=False)
    ours_on_modeci = compat.EvaluableParameter(ref_p, verbose=False)
    ours = compat.EvaluableParameter(our_p)
    first_ref = quiet(ref.get_current_value, parameters)
    for o in (ours, ours_on_modeci):
        same(o.get_current_value(parameters), first_ref)
    for _ in range(2):
        r = quiet(ref.evaluate, parameters)
        for o in (ours, ours_on_modeci):
            same(o.evaluate(parameters), r)
            same(o.get_current_value(parameters), quiet(ref.get_current_value, parameters))
            same(o.curr_value, ref.curr_value)


@pytest.mark.parametrize("maker", [mdf, ours_model], ids=["modeci", "ours"])
def test_time_derivative_and_function_parameters(maker):
    """A state integrated by time_increment (first call initialises it), and a parameter
    calling a registered function with args."""
    s = maker.Parameter(id="s", default_initial_value="2 * a", time_derivative="-s * k")
    f = maker.Parameter(
        id="f", function="logistic", args={"variable0": "s", "gain": "k", "bias": 0, "offset": 0}
    )
    env = {"a": 1.5, "k": 0.7}
    pairs = [
        (ee.EvaluableParameter(s), compat.EvaluableParameter(s)),
        (ee.EvaluableParameter(f), compat.EvaluableParameter(f)),
    ]
    for dt in (None, 0.1, 0.1, 0.05):
        for ref, ours in pairs:
            r = quiet(ref.evaluate, env, time_increment=dt)
            o = ours.evaluate(env, time_increment=dt)
            np.testing.assert_allclose(o, r, rtol=1e-12)
            env[ours.parameter.id] = o


@pytest.mark.parametrize(
    "function, value, args, params",
    [
        (
            "linear",
            None,
            {"variable0": "input", "slope": 2, "intercept": "2 * slope"},
            {"input": 1.5},
        ),
        ("linear", "99", {"variable0": 1, "slope": "math.sqrt(4)", "intercept": 4}, {}),
        (
            None,
            "2 * slope * variable0 + intercept",
            {"slope": "numpy.sqrt(4)", "intercept": 4, "variable0": "input"},
            {"input": 3},
        ),
        ("logistic", None, {"variable0": "x", "gain": 2, "bias": 3, "offset": 1}, {"x": 0.25}),
        (
            "exponential",
            None,
            {"variable0": "x", "scale": 2, "rate": 3, "bias": 4, "offset": 5},
            {"x": np.array([0.0, 1.0])},
        ),
        ("sin", None, {"variable0": "x", "scale": 2}, {"x": math.pi / 6}),
        ("MatMul", None, {"A": "a", "B": "a"}, {"a": np.array([[1, 2], [3, 4]])}),
        ("Relu", None, {"A": "a"}, {"a": np.array([-1.0, 2.0])}),
        # ONNX ops (values exact in float32, which the reference computes in)
        ("onnx::Add", None, {"A": "a", "B": "b"}, {"a": np.array([1.0, 2.5]), "b": np.array(4.0)}),
        ("onnx::Relu", None, {"X": "a"}, {"a": np.array([[-1.0, 2.0]])}),
        (
            "onnx::Transpose",
            None,
            {"data": "a", "perm": [1, 0]},
            {"a": np.arange(6.0).reshape(2, 3)},
        ),
        (None, "x + y", None, {"x": 1, "y": 2}),
    ],
)
@pytest.mark.parametrize("maker", [mdf, ours_model], ids=["modeci", "ours"])
def test_evaluable_function_against_a_dict(maker, function, value, args, params):
    f = maker.Function(
        id="f", function=function, value=value, args=dict(args) if args is not None else None
    )
    if maker is mdf and args is None:
        f.args = {}
    r = quiet(ee.EvaluableFunction(f).evaluate, dict(params))
    ours = compat.EvaluableFunction(f)
    o = ours.evaluate(dict(params))
    np.testing.assert_allclose(o, r, rtol=1e-12)
    np.testing.assert_allclose(ours.curr_value, r, rtol=1e-12)


@pytest.mark.parametrize("reduce", ["overwrite", "add", "multiply"])
@pytest.mark.parametrize(
    "port",
    [
        {"shape": (2,)},
        {"shape": (), "type": "float"},
        {"shape": (2, 2), "type": "int"},
        {"default_value": 5.0},
    ],
)
def test_evaluable_input(port, reduce):
    """The initial value, reduce of several sends, and that reading empties the port."""
    p = mdf.InputPort(id="x", reduce=reduce, **port)
    ref, ours = ee.EvaluableInput(p), compat.EvaluableInput(p)
    if ref.curr_value is None:
        assert ours.curr_value is None
    else:
        same(ours.curr_value, ref.curr_value)
    for sends in ([], [np.array(2.0), np.array(3.0)], [np.array(4.0)], []):
        for v in sends:
            quiet(ref.set_input_value, v.copy())
            ours.set_input_value(v.copy())
        same(ours.evaluate({}), quiet(ref.evaluate, {}))
        assert ours.curr_value is None and ref.curr_value is None


@pytest.mark.parametrize(
    "value, params",
    [
        ("a * 2", {"a": np.array([1, 2])}),
        ("a", {"a": [1, 2]}),
        ("3", {}),
        ("0.5 + 0.5", {}),
        ("x if x > 0 else -x", {"x": -2}),
    ],
)
def test_evaluable_output(value, params):
    op = mdf.OutputPort(id="o", value=value)
    ref, ours = ee.EvaluableOutput(op), compat.EvaluableOutput(op)
    same(ours.evaluate(params), quiet(ref.evaluate, params))
    same(ours.curr_value, ref.curr_value)


@pytest.mark.parametrize(
    "expr, params",
    [
        (None, {}),
        (3, {}),
        (2.5, {}),
        ("3", {}),
        ("2.5", {}),
        ("1e3", {}),
        ("x", {"x": 4}),
        ("x", {"x": [1, 2]}),
        ("x", {"x": np.array([1.0])}),
        ("x", {"x": {"a": 1}}),
        ([1, 2, 3], {}),
        (np.array([1, 2]), {}),
        ("x * 0.5", {"x": 4}),
        ("x * 0.5", {"x": 3}),
        ("x / 2", {"x": np.float64(4)}),
        ("math.pi * r ** 2", {"r": 2.0}),
        ("numpy.exp(v)", {"v": np.array([0.0, 1.0])}),
        ("[a, b]", {"a": 1, "b": 2}),
        ("a > b", {"a": 1, "b": 2}),
        ("abs(-3) + max(1, 2)", {}),
        ("constant", {}),
        ("y", {"y": "3"}),
        ("y", {"y": "x + 1", "x": 2}),
    ],
)
def test_evaluate_expr(expr, params):
    same(compat.evaluate_expr(expr, params), quiet(ee.evaluate_expr, expr, params))


@pytest.mark.parametrize("expr", ["x + q", "'abc'"])
def test_evaluate_expr_failures(expr):
    """What the reference cannot evaluate raises (ours: MDFError, one line), or with
    allow_strings_returned comes back as the string."""
    with pytest.raises(Exception, match="Could not evaluate"):
        quiet(ee.evaluate_expr, expr, {"x": 1})
    with pytest.raises(MDFError) as e:
        compat.evaluate_expr(expr, {"x": 1})
    assert "\n" not in str(e.value)
    assert compat.evaluate_expr(expr, {"x": 1}, allow_strings_returned=True) == quiet(
        ee.evaluate_expr, expr, {"x": 1}, allow_strings_returned=True
    )


def test_evaluate_expr_is_never_python_eval():
    """Model text goes through the expression compiler: no attribute access, no imports."""
    for bad in ("__import__('os').getcwd()", "x.__class__", "(lambda: 1)()", "[c for c in 'ab']"):
        with pytest.raises(MDFError):
            compat.evaluate_expr(bad, {"x": 1})
    with pytest.raises(MDFError, match="tensorflow"):
        compat.evaluate_expr("1 + 1", {}, array_format=compat.FORMAT_TENSORFLOW)


# The cases of the reference suite's tests/test_helpers.py, and a few more
@pytest.mark.parametrize(
    "expression",
    [
        0,
        (),
        "",
        "x",
        "x.y",
        "3*x + y",
        "x[y]",
        "x[y[z]]",
        "x[y[z + 1]]",
        "x[y] + z[a]",
        "x[y[z]] + a[b]",
        "x[y[z[1]]] + a[0]",
        "x[y[z] + 1]",
        "x[y[z[1 + a] + b[c]]] + d[0]",
        "[x, 0, 1]",
        "sin(x) + math.cos(y)",
        "'s' + t",
        "a if b > c else d",
    ],
)
def test_get_required_variables_from_expression(expression):
    for e in (expression, f"[{expression}]") if isinstance(expression, str) else (expression,):
        assert set(compat.get_required_variables_from_expression(e)) == set(
            ee.get_required_variables_from_expression(e)
        )


def test_names_and_constants():
    from modelspec.utils import FORMAT_NUMPY, FORMAT_TENSORFLOW

    assert (compat.FORMAT_NUMPY, compat.FORMAT_TENSORFLOW) == (FORMAT_NUMPY, FORMAT_TENSORFLOW)
    assert compat.FORMAT_DEFAULT == ee.FORMAT_DEFAULT
    assert compat.KNOWN_PARAMETERS == ee.KNOWN_PARAMETERS
    public = {
        n
        for n in dir(ee)
        if n[0] != "_"
        and (n.startswith(("Evaluable", "FORMAT_")) or n in ("main", "evaluate_expr"))
    }
    assert public <= set(compat.__all__)
    assert EvaluableParameterSignature.matches()


class EvaluableParameterSignature:
    """Constructor and method signatures are the reference's (names and defaults)."""

    @staticmethod
    def matches() -> bool:
        import inspect

        for name in (
            "EvaluableGraph",
            "EvaluableNode",
            "EvaluableParameter",
            "EvaluableFunction",
            "EvaluableInput",
            "EvaluableOutput",
        ):
            ref_cls, our_cls = getattr(ee, name), getattr(compat, name)
            for meth in [m for m in vars(ref_cls) if not m.startswith("_") or m == "__init__"]:
                if not callable(getattr(ref_cls, meth)) or meth in ("parse_condition",):
                    continue
                rs = inspect.signature(getattr(ref_cls, meth)).parameters
                os_ = inspect.signature(getattr(our_cls, meth)).parameters
                for pname, rp in rs.items():
                    assert pname in os_, (name, meth, pname)
                    assert os_[pname].default == rp.default or rp.default is inspect._empty, (
                        name,
                        meth,
                        pname,
                    )
        for fn in ("main", "evaluate_expr", "get_required_variables_from_expression"):
            rs = inspect.signature(getattr(ee, fn)).parameters
            assert list(inspect.signature(getattr(compat, fn)).parameters) == list(rs), fn
        return True


def test_compat_runs_without_modeci_mdf(tmp_path):
    """modeci-mdf is an optional extra: compat never imports it (main() reads files with
    mdf_engine's loader). Checked in a fresh interpreter where importing it fails."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    model = {
        "m": {
            "graphs": {
                "g": {
                    "nodes": {
                        "A": {
                            "parameters": {"c": {"value": "c + 2", "default_initial_value": 1}},
                            "output_ports": {"o": {"value": "c * 3"}},
                        }
                    }
                }
            }
        }
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    code = (
        "import sys; sys.modules['modeci_mdf'] = None\n"
        "from mdf_engine import compat\n"
        f"eg = compat.main({str(path)!r})\n"
        "print(eg.enodes['A'].get_output(), eg.scheduler.execution_list[None][0].pop().id)\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert out.returncode == 0, out.stderr
    ref = quiet(ee.main, str(path))
    value, node = out.stdout.split()
    assert float(value) == ref.enodes["A"].get_output()
    assert node == "A"
