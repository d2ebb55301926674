"""The d32 memory layout of quint8 tensors (hexagon-digest §3), for checking that a ``*_d32`` op is
its plain op on another layout.

A d32 tensor ``[b, h, w, d]`` is stored padded, as ``[B, H_t, D_t/32, W_t, 32]``: element
``[b, h, w, d]`` sits at ``b*H_t*W_t*D_t + (h+top)*W_t*D_t + ((d+before)//32)*(W_t*32) +
(w+left)*32 + (d+before)%32``, where ``H_t = top + h + bottom``, ``W_t = left + w + right`` is a
multiple of 4 (right is the smallest value >= the requested one that makes it so, less 4 if that
exceeds 7) and ``D_t`` is ``d + before`` rounded up to a multiple of 32. The backend computes on
plain arrays; :func:`pack` and :func:`unpack` convert between the two, with the padding bytes
filled by a given value (FillPadding_8_d32's purpose: an op must not read them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MDFError


@dataclass(frozen=True)
class D32Geometry:
    """Paddings and padded sizes of one d32 tensor."""

    shape: tuple[int, int, int, int]
    top: int = 4
    bottom: int = 4
    left: int = 4
    right: int = 0
    before: int = 0

    @property
    def padded(self) -> tuple[int, int, int, int, int]:
        """The 5-D storage shape [B, H_t, D_t/32, W_t, 32]."""
        b, h, w, d = self.shape
        return (
            b,
            self.top + h + self.bottom,
            -(-(d + self.before) // 32),
            self.left + w + self.right,
            32,
        )

    def flat_index(self, b: int, h: int, w: int, d: int) -> int:
        """Byte offset of element [b, h, w, d] (the formula of the module doc)."""
        _, ht, ds, wt, _ = self.padded
        dt = ds * 32
        return (
            b * ht * wt * dt
            + (h + self.top) * wt * dt
            + ((d + self.before) // 32) * (wt * 32)
            + (w + self.left) * 32
            + (d + self.before) % 32
        )


def geometry(
    shape: tuple[int, ...],
    top: int = 4,
    bottom: int = 4,
    left: int = 4,
    right_min: int = 0,
    before: int = 0,
) -> D32Geometry:
    """The d32 geometry of a tensor with the requested paddings (module doc rules)."""
    b, h, w, d = shape
    if not (
        0 <= before <= 31
        and 0 <= left <= 7
        and 0 <= right_min <= 7
        and 0 <= top <= 8
        and 0 <= bottom <= 8
    ):
        raise MDFError("d32 paddings: depth before 0..31, width 0..7, height 0..8")
    right = right_min + (-(left + w + right_min)) % 4
    if right > 7:
        right -= 4
    return D32Geometry((b, h, w, d), top, bottom, left, right, before)


def pack(x: np.ndarray, g: D32Geometry, fill: np.ndarray | int = 0) -> np.ndarray:
    """The d32 buffer (5-D) of plain uint8 data ``x``; padding bytes = ``fill`` (a scalar or an
    array of the padded shape)."""
    buf = np.empty(g.padded, np.uint8)
    buf[...] = fill
    b, h, w, d = g.shape
    for k in range(d):
        s, j = divmod(k + g.before, 32)
        buf[:, g.top : g.top + h, s, g.left : g.left + w, j] = x[..., k]
    return buf


def unpack(buf: np.ndarray, g: D32Geometry) -> np.ndarray:
    """The plain [b, h, w, d] data held by a d32 buffer (padding ignored)."""
    b, h, w, d = g.shape
    out = np.empty(g.shape, np.uint8)
    for k in range(d):
        s, j = divmod(k + g.before, 32)
        out[..., k] = buf[:, g.top : g.top + h, s, g.left : g.left + w, j]
    return out
