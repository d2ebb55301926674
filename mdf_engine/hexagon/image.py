"""Hexagon image ops: RgbaToRgb_8, Argb32ToRgb_8, Nv21ToRgb_8, ImageTransform_f and
QuantizedExtractGlimpse_8.

* RgbaToRgb_8 drops channel 3 (mode 1 reverses the order of the three kept channels);
  Argb32ToRgb_8 drops channel 0 (mode 1 reverses the kept ones). Ranges copied.
* Nv21ToRgb_8: input ``[b, 3h/2, w, 1]`` uint8 (an NV21 buffer: h rows of Y, then h/2 rows of
  interleaved V,U at half resolution); ``R = Y + 1.370705 (V-128)``,
  ``G = Y - 0.698001 (V-128) - 0.337633 (U-128)``, ``B = Y + 1.732446 (U-128)``, rounded and
  clipped to 0..255 (the conversion the op list links to); mode 1 gives BGR; range [0, 255].
* ImageTransform_f (TF ImageProjectiveTransform): transform rows ``[a0..a7]`` (``[1,1,B,8]`` or one
  row for all) map output (x, y) to input ``((a0 x + a1 y + a2) / k, (a3 x + a4 y + a5) / k)``,
  ``k = a6 x + a7 y + 1``; bilinear, corners outside the image read 0.
* QuantizedExtractGlimpse_8 (TF extract_glimpse): offsets ``[1,1,B,2]`` = (y, x) of each glimpse
  centre: normalized -> times the image size, centered -> relative to the image centre
  (normalized and centered: ``(v + 1) * size / 2``). The window starts at ``centre - size // 2``.
  Places outside the image get uniform noise over the code range (uniform noise 1) or the zero
  code (0); the noise is drawn from a generator seeded by the op's inputs, so a run repeats.
"""

from __future__ import annotations

import zlib

import numpy as np

from ..errors import MDFError
from ._registry import hexop
from .quant import F32, as4d, codes, fval, ival, scalar, zero_code

MODE_Q = ("input", "mode", "input_min", "input_max")


def _u8_channels(x, n: int, op: str) -> np.ndarray:
    a = as4d(x)
    if a.shape[3] != n:
        raise MDFError(f"hexagon::{op}: input depth must be {n}, got shape {a.shape}")
    return a.astype(np.uint8)


@hexop("RgbaToRgb_8", MODE_Q)
def rgba_to_rgb_8(x, mode, mn, mx, *, padding="NA"):
    """RGBA -> RGB (mode 0) or the 3 colour channels reversed (mode 1); range copied."""
    a = _u8_channels(x, 4, "RgbaToRgb_8")[..., :3]
    return (
        np.ascontiguousarray(a[..., ::-1] if ival(mode) else a),
        scalar(fval(mn)),
        scalar(fval(mx)),
    )


@hexop("Argb32ToRgb_8", MODE_Q)
def argb32_to_rgb_8(x, mode, mn, mx, *, padding="NA"):
    """ARGB -> RGB (mode 0) or the 3 colour channels reversed (mode 1); range copied."""
    a = _u8_channels(x, 4, "Argb32ToRgb_8")[..., 1:]
    return (
        np.ascontiguousarray(a[..., ::-1] if ival(mode) else a),
        scalar(fval(mn)),
        scalar(fval(mx)),
    )


@hexop("Nv21ToRgb_8", ("input", "mode"))
def nv21_to_rgb_8(x, mode, *, padding="NA"):
    """NV21 [b, 3h/2, w, 1] -> RGB (mode 0) / BGR (mode 1) [b,h,w,3], range [0, 255]."""
    a = as4d(x)
    b, rows, w, d = a.shape
    if d != 1 or rows % 3 or w % 2 or (2 * rows // 3) % 2:
        raise MDFError(
            f"hexagon::Nv21ToRgb_8: input is an NV21 buffer [b, 3h/2, w, 1] with even "
            f"h and w, got {a.shape}"
        )
    h = 2 * rows // 3
    y = a[:, :h, :, 0].astype(np.float64)
    vu = a[:, h:, :, 0].reshape(b, h // 2, w // 2, 2).astype(np.float64) - 128.0
    v = np.repeat(np.repeat(vu[..., 0], 2, axis=1), 2, axis=2)
    u = np.repeat(np.repeat(vu[..., 1], 2, axis=1), 2, axis=2)
    rgb = np.stack([y + 1.370705 * v, y - 0.698001 * v - 0.337633 * u, y + 1.732446 * u], -1)
    out = np.clip(np.floor(rgb + 0.5), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(out[..., ::-1] if ival(mode) else out), scalar(0.0), scalar(255.0)


def projective_transform(img: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Bilinear projective warp of img [b,h,w,d] by rows t [b or 1, 8] (module doc)."""
    nb, h, w, d = img.shape
    ys, xs = np.meshgrid(
        np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij"
    )
    out = np.zeros(img.shape, np.float64)
    for n in range(nb):
        a = t[min(n, len(t) - 1)]
        k = a[6] * xs + a[7] * ys + 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            sx = (a[0] * xs + a[1] * ys + a[2]) / k
            sy = (a[3] * xs + a[4] * ys + a[5]) / k
        ok = np.isfinite(sx) & np.isfinite(sy) & (sx > -1) & (sx < w) & (sy > -1) & (sy < h)
        sx, sy = np.where(ok, sx, -2.0), np.where(ok, sy, -2.0)
        x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
        fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
        acc = np.zeros((h, w, d))
        for dy, wy in ((0, 1 - fy), (1, fy)):
            for dx, wx in ((0, 1 - fx), (1, fx)):
                yy, xx = y0 + dy, x0 + dx
                inside = ok & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
                val = img[n, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
                acc += np.where(inside[..., None], val * wy * wx, 0.0)
        out[n] = acc
    return out


@hexop("ImageTransform_f", ("input", "transform"), outputs=("output",))
def image_transform_f(x, transform, *, padding="NA"):
    """Projective transform of each image (module doc), same shape as the input."""
    img = as4d(x, np.float64)
    t = np.asarray(transform, np.float64).reshape(-1, 8) if np.size(transform) % 8 == 0 else None
    if t is None or len(t) not in (1, img.shape[0]):
        raise MDFError(
            "hexagon::ImageTransform_f: transforms are rows of 8 values, one per "
            f"image (or one for all), got shape {np.shape(transform)}"
        )
    return (projective_transform(img, t).astype(F32),)


@hexop(
    "QuantizedExtractGlimpse_8",
    (
        "input",
        "offsets",
        "input_min",
        "input_max",
        "glimpse_width",
        "glimpse_height",
        "centered",
        "normalized",
        "uniform_noise",
    ),
)
def quantized_extract_glimpse_8(
    x, offsets, mn, mx, gw, gh, centered, normalized, noise, *, padding="NA"
):
    """Glimpses [b, glimpse_height, glimpse_width, d] (module doc); range copied."""
    a = codes(x)
    nb, h, w, d = a.shape
    off = np.asarray(offsets, np.float64).reshape(-1, 2)
    if len(off) != nb:
        raise MDFError(f"hexagon::QuantizedExtractGlimpse_8: {len(off)} offsets for {nb} images")
    sh, sw = ival(gh), ival(gw)
    if sh < 1 or sw < 1:
        raise MDFError("hexagon::QuantizedExtractGlimpse_8: glimpse size must be >= 1")
    norm, cent = ival(normalized), ival(centered)
    if ival(noise):
        seed = zlib.crc32(a.tobytes() + off.tobytes())
        out = np.random.default_rng(seed).integers(0, 256, (nb, sh, sw, d), dtype=np.uint8)
    else:
        out = np.full((nb, sh, sw, d), zero_code(fval(mn), fval(mx)), np.uint8)
    for n in range(nb):
        cy, cx = off[n]
        if norm and cent:
            cy, cx = (cy + 1) * h / 2, (cx + 1) * w / 2
        elif norm:
            cy, cx = cy * h, cx * w
        elif cent:
            cy, cx = cy + h / 2, cx + w / 2
        y0, x0 = int(np.floor(cy)) - sh // 2, int(np.floor(cx)) - sw // 2
        ys, xs = max(y0, 0), max(x0, 0)
        ye, xe = min(y0 + sh, h), min(x0 + sw, w)
        if ye > ys and xe > xs:
            out[n, ys - y0 : ye - y0, xs - x0 : xe - x0] = a[n, ys:ye, xs:xe]
    return out, scalar(fval(mn)), scalar(fval(mx))
