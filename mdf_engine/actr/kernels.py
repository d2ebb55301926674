"""Numba kernels of ACT-R production cycles over the integer tables of :mod:`.tables`.

One cycle is what one ``evaluate`` of modeci-mdf's ACT-R graph computes, in the order its
schedule runs the nodes: the retrieval (``retrieve_chunk`` of ``dm_input``), the goal update
(``change_goal`` and the goal state), pattern matching, conflict resolution, firing
(``update_goal``/``update_retrieval``) and the termination check. :func:`cycles` runs cycles,
each fed the previous one's fired patterns, until a count, the termination, or something only
Python can do (a choice among several matching productions: ``conflict_resolution_function``'s
seeded draw; an error the interpreter raises: the runner raises the same MDFError).

State (updated in place): ``D`` the dict rows (``tables.GOAL_IN`` ...), ``M`` the matched
productions (production, then its bound value ids), ``S`` the scalars below. The kernels see
integer arrays only: no text of the model reaches compiled code.
"""

from __future__ import annotations

import numba
import numpy as np

# the numbers of tables.py (kinds, buffers, dict rows, chunk flags)
_WILD, _IS, _IS_NOT, _BIND, _SAME, _DIFFER = 0, 1, 2, 3, 4, 5
_GOAL_IN, _DM_IN, _CHANGE, _GOAL, _OUT_G, _OUT_R, _FIRST = 0, 1, 2, 3, 4, 5, 6

#: S entries: retrieved chunk (-1: none), matches, chosen match (-1: none), status, status
#: argument, cycles run by the last call, terminated
RETRIEVED, MATCHES, CHOSEN, STATUS, STATUS_ARG, RAN, DONE = range(7)
#: statuses: ran; several productions match (Python chooses, then calls again with
#: ``resume=1``); a chunk's slot table cannot be read; a retrieved chunk does not fit its type
OK, CHOOSE, BAD_TABLE, BAD_TYPE = 0, 1, 2, 3


@numba.njit(cache=True)
def _copy_row(D, src, dst):
    n = D[src, 0]
    for j in range(1 + 2 * n):
        D[dst, j] = D[src, j]


@numba.njit(cache=True)
def _find(D, row, key):
    for i in range(D[row, 0]):
        if D[row, 1 + 2 * i] == key:
            return i
    return -1


@numba.njit(cache=True)
def _put(D, row, key, val):
    i = _find(D, row, key)
    if i < 0:
        i = D[row, 0]
        D[row, 0] = i + 1
        D[row, 1 + 2 * i] = key
    D[row, 2 + 2 * i] = val


@numba.njit(cache=True)
def _retrieve(D, S, dm_rows, dm_flags, n_chunks, kind, arg, bvar, bval):
    """``retrieve_chunk(dm_input, chunks, types)``: S[RETRIEVED] = the first chunk the request
    matches; False (S[STATUS] set) if the interpreter would raise."""
    S[RETRIEVED] = -1
    n = D[_DM_IN, 0]
    if n == 0:
        return True
    width = dm_rows.shape[1]
    for c in range(n_chunks):
        if dm_flags[c] == 1:
            S[STATUS] = BAD_TABLE
            S[STATUS_ARG] = c
            return False
        nb = 0
        ok = True
        for second in range(2):  # literals and first uses, then later uses and negations
            for i in range(1, n):
                s = D[_DM_IN, 2 + 2 * i]
                k = kind[s]
                if k == _WILD or (second == 0 and k == _DIFFER):
                    continue
                pos = i - 1
                v = dm_rows[c, pos] if pos < width else -1
                if v < 0:
                    ok = False
                    break
                if k == _IS or k == _IS_NOT:
                    if second == 1:
                        continue
                    if (v == arg[s]) != (k == _IS):
                        ok = False
                        break
                    continue
                b = -1
                for j in range(nb):
                    if bvar[j] == arg[s]:
                        b = j
                if k == _BIND and second == 0:
                    if b < 0:
                        bvar[nb] = arg[s]
                        bval[nb] = v
                        nb += 1
                    continue
                if b < 0 or (bval[b] == v) != (k == _BIND):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            if dm_flags[c] == 2:
                S[STATUS] = BAD_TYPE
                S[STATUS_ARG] = c
                return False
            S[RETRIEVED] = c
            return True
    return True


@numba.njit(cache=True)
def _update_goal(D, reset_on_empty, NAME, BUFFER):
    """``change_goal(goal_input, goal_state)`` and the new goal state."""
    _copy_row(D, _GOAL, _CHANGE)
    for i in range(D[_GOAL_IN, 0]):
        _put(D, _CHANGE, D[_GOAL_IN, 1 + 2 * i], D[_GOAL_IN, 2 + 2 * i])
    i = _find(D, _CHANGE, BUFFER)
    if i >= 0:
        n = D[_CHANGE, 0]
        for j in range(1 + 2 * i, 2 * n - 1):
            D[_CHANGE, j] = D[_CHANGE, j + 2]
        D[_CHANGE, 0] = n - 1
    if reset_on_empty and D[_GOAL_IN, 0] == 0:
        _copy_row(D, _FIRST, _GOAL)
    else:
        _copy_row(D, _CHANGE, _GOAL)


@numba.njit(cache=True)
def _match(D, S, M, gpos, ret_rows, tests, starts, never, NAME):
    """``pattern_matching_function``: M's first S[MATCHES] rows are the matching productions
    and their bound values."""
    glen = 0
    for i in range(D[_GOAL, 0]):
        if D[_GOAL, 1 + 2 * i] != NAME:
            gpos[glen] = D[_GOAL, 2 + 2 * i]
            glen += 1
    r = S[RETRIEVED]
    rwidth = ret_rows.shape[1]
    m = 0
    for p in range(starts.shape[0] - 1):
        if never[p]:
            continue
        ok = True
        for t in range(starts[p], starts[p + 1]):
            k, buf, pos, a = tests[t, 0], tests[t, 1], tests[t, 2], tests[t, 3]
            v = -1
            if buf == 0:
                if pos < glen:
                    v = gpos[pos]
            elif r >= 0 and pos < rwidth:
                v = ret_rows[r, pos]
            if v < 0:
                ok = False
            elif k == _BIND:
                M[m, 1 + a] = v
            elif k == _IS or k == _IS_NOT:
                ok = (v == a) == (k == _IS)
            else:
                ok = a >= 0 and (M[m, 1 + a] == v) == (k == _SAME)
            if not ok:
                break
        if ok:
            M[m, 0] = p
            m += 1
    S[MATCHES] = m


@numba.njit(cache=True)
def _fire_one(D, row, M, c, p, keys, vals, refs, n):
    D[row, 0] = n[p]
    for i in range(n[p]):
        D[row, 1 + 2 * i] = keys[p, i]
        ref = refs[p, i]
        D[row, 2 + 2 * i] = M[c, 1 + ref] if ref >= 0 else vals[p, i]


@numba.njit(cache=True)
def cycles(
    D, S, M, gpos, bvar, bval, kind, arg,
    dm_rows, dm_flags, ret_rows, tests, starts, never,
    tg_key, tg_val, tg_ref, tg_n, tr_key, tr_val, tr_ref, tr_n,
    n_chunks, reset_on_empty, NAME, BUFFER, count, resume, feed,
):  # fmt: skip
    """Up to ``count`` cycles (``resume``: the first continues after a choice Python made);
    with ``feed`` each cycle after the first takes the previous one's fired patterns as its
    inputs, and the run ends after the cycle in which no production fired."""
    S[STATUS] = OK
    S[RAN] = 0
    S[DONE] = 0
    for step in range(count):
        if step > 0:
            _copy_row(D, _OUT_G, _GOAL_IN)
            _copy_row(D, _OUT_R, _DM_IN)
        if not (resume and step == 0):
            if not _retrieve(D, S, dm_rows, dm_flags, n_chunks, kind, arg, bvar, bval):
                return
            _update_goal(D, reset_on_empty, NAME, BUFFER)
            _match(D, S, M, gpos, ret_rows, tests, starts, never, NAME)
            m = S[MATCHES]
            if m > 1:
                S[STATUS] = CHOOSE
                return
            S[CHOSEN] = 0 if m == 1 else -1
        c = S[CHOSEN]
        if c < 0:
            D[_OUT_G, 0] = 0
            D[_OUT_R, 0] = 0
        else:
            p = M[c, 0]
            _fire_one(D, _OUT_G, M, c, p, tg_key, tg_val, tg_ref, tg_n)
            _fire_one(D, _OUT_R, M, c, p, tr_key, tr_val, tr_ref, tr_n)
        S[RAN] += 1
        if c < 0:
            S[DONE] = 1
            if feed:
                return
        if not feed:
            return


def state(width: int, n_productions: int, n_vars: int) -> dict[str, np.ndarray]:
    """Fresh state arrays for dicts of up to ``width`` items."""
    return {
        "D": np.zeros((7, 1 + 2 * max(1, width)), dtype=np.int64),
        "S": np.zeros(8, dtype=np.int64),
        "M": np.zeros((max(1, n_productions), 1 + n_vars), dtype=np.int64),
        "gpos": np.zeros(max(1, width), dtype=np.int64),
        "bvar": np.zeros(max(1, width), dtype=np.int64),
        "bval": np.zeros(max(1, width), dtype=np.int64),
    }
