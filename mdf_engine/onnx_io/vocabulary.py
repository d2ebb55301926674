"""What MDF's expression and function names become in ONNX: the tables the exporters read.

Standard functions as formulas over their argument names (the spec's definitions), the
element-wise math calls and binary numpy calls with their ONNX operators, Python operators and
comparisons, named constants, and the ONNX element types of the export dtypes. Used by
:mod:`mdf_engine.onnx_io.translate` (one node's values) and the stateful export.
"""

from __future__ import annotations

import ast
import math

__all__ = [
    "OPSET_FLOOR",
    "STD_FORMULAS",
    "STD_ARGS",
    "UNARY_CALLS",
    "BINARY_CALLS",
    "BINOPS",
    "COMPARE",
    "CONSTANTS",
    "TYPE_STR",
    "ELEM",
    "KIND_TYPE",
]

#: The lowest opset written (comparisons such as GreaterOrEqual need 12; 13 is widely run).
OPSET_FLOOR = 13

#: Standard functions as formulas over their argument names (the spec's definitions).
STD_FORMULAS = {
    "linear": "variable0 * slope + intercept",
    "logistic": "1 / (1 + exp(-1 * gain * (variable0 + bias) + offset))",
    "exponential": "scale * exp((rate * variable0) + bias) + offset",
    "sin": "scale * sin(variable0)",
    "cos": "scale * cos(variable0)",
    "tan": "scale * tan(variable0)",
    "sinh": "scale * sinh(variable0)",
    "cosh": "scale * cosh(variable0)",
    "tanh": "scale * tanh(variable0)",
    "arcsin": "scale * asin(variable0)",
    "arccos": "scale * acos(variable0)",
    "arctan": "scale * atan(variable0)",
    "MatMul": "A @ B",
    "Relu": "_relu(A)",
}
STD_ARGS = {
    "linear": ("variable0", "slope", "intercept"),
    "logistic": ("variable0", "gain", "bias", "offset"),
    "exponential": ("variable0", "scale", "rate", "bias", "offset"),
    "MatMul": ("A", "B"),
    "Relu": ("A",),
}

#: Element-wise math calls (math.f, numpy.f, np.f or bare f) and their ONNX operators.
UNARY_CALLS = {
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "sin": "Sin",
    "cos": "Cos",
    "tan": "Tan",
    "asin": "Asin",
    "arcsin": "Asin",
    "acos": "Acos",
    "arccos": "Acos",
    "atan": "Atan",
    "arctan": "Atan",
    "sinh": "Sinh",
    "cosh": "Cosh",
    "tanh": "Tanh",
    "asinh": "Asinh",
    "arcsinh": "Asinh",
    "acosh": "Acosh",
    "arccosh": "Acosh",
    "atanh": "Atanh",
    "arctanh": "Atanh",
    "abs": "Abs",
    "fabs": "Abs",
    "absolute": "Abs",
    "floor": "Floor",
    "ceil": "Ceil",
    "erf": "Erf",
    "sign": "Sign",
    "negative": "Neg",
    "reciprocal": "Reciprocal",
    "_relu": "Relu",
}
BINARY_CALLS = {
    "maximum": "Max",
    "minimum": "Min",
    "matmul": "MatMul",
    "power": "Pow",
    "add": "Add",
    "subtract": "Sub",
    "multiply": "Mul",
    "divide": "Div",
    "true_divide": "Div",
}
BINOPS = {
    ast.Add: "Add",
    ast.Sub: "Sub",
    ast.Mult: "Mul",
    ast.Div: "Div",
    ast.Pow: "Pow",
    ast.MatMult: "MatMul",
}
COMPARE = {
    ast.Lt: "Less",
    ast.Gt: "Greater",
    ast.LtE: "LessOrEqual",
    ast.GtE: "GreaterOrEqual",
    ast.Eq: "Equal",
}
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "tau": math.tau}

TYPE_STR = {
    "float32": "tensor(float)",
    "float64": "tensor(double)",
    "int64": "tensor(int64)",
    "int32": "tensor(int32)",
    "bool": "tensor(bool)",
    "uint8": "tensor(uint8)",
    "int8": "tensor(int8)",
    "float16": "tensor(float16)",
}
ELEM = {"float32": 1, "float64": 11, "int64": 7, "int32": 6, "bool": 9}
KIND_TYPE = {"int": "tensor(int64)", "bool": "tensor(bool)"}
