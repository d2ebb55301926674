"""Hexagon graph I/O ops and the self-check ops (Check, Close_*): what they pass on and by how
much a failed check fails."""

import numpy as np
import pytest
from hexagon_formulas import F, s

from mdf_engine.errors import MDFError
from mdf_engine.hexagon import run


def test_checks_raise_with_amount():
    run("Check", [np.array([1, 2]), np.array([1, 2])])
    with pytest.raises(MDFError, match="exceeds the tolerance"):
        run("Check", [np.array([1, 2]), np.array([1, 3])])
    ref = np.linspace(-1, 1, 10).astype(F)
    run("Close_f", [ref + F(0.1), ref])  # 0.1 <= 0.07 * 2 = 0.14
    with pytest.raises(MDFError, match=r"exceeds the tolerance 0.14 by 0.06"):
        run("Close_f", [ref + F(0.2), ref])
    run("Close_f", [ref + F(0.2), ref, s(0.15)])
    run("Close_quint8", [np.array([100, 50]), np.array([105, 50])])
    with pytest.raises(MDFError, match="Close_int32 failed"):
        run("Close_int32", [np.array([100, 50]), np.array([120, 50])])
    q = np.array([[[[10, 20]]]], np.uint8)
    run("Close_q_quint8", [q, s(0), s(1), q + 3, s(0), s(1)])
    with pytest.raises(MDFError, match="Close_q_quint8 failed"):
        run("Close_q_quint8", [q, s(0), s(1), q + 30, s(0), s(1)])
    run("Close_d32", [np.array([13]), s(0), s(255), np.array([13.4])])
    with pytest.raises(MDFError, match="excess error"):
        run("Close_d32", [np.array([14]), s(0), s(255), np.array([13.4])])


def test_io_const_nop():
    a = np.ones((1, 1, 1, 2))
    assert run("INPUT", [a, a])[1] is a
    np.testing.assert_array_equal(run("Nop", [a])[0], a)
    np.testing.assert_array_equal(run("Const", [], value=[1.0, 2.0])[0], [[[[1.0, 2.0]]]])
    with pytest.raises(MDFError, match="needs attribute 'value'"):
        run("Const", [])
