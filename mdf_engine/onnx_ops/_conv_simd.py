"""The register-blocked inner loop of the convolutions of :mod:`._conv_shift`, as Numba
intrinsics that emit LLVM vector code.

LLVM's loop vectorizer vectorizes the innermost loop only, so a Numba loop over pixels keeps
its accumulators in memory and reloads them for every few taps; a block of filters by pixels
written out in scalars lost the vectorization altogether (docs/performance.md, goal 5). The
intrinsics here keep the sums in vector registers across all the taps, as a matrix product's
micro-kernel does.

``tile_F_B(xp, offs, w, acc, bias, m, am, K, t0, a0, nq)`` computes, for the ``F`` filters
``m .. m + F - 1``, ``acc[am + f, a0 + t] = sum_r w[m + f, r] * xp[t0 + offs[r] + t] + bias[m +
f]`` for ``t < nq * B * lanes``, where a vector holds ``lanes`` values (:data:`VEC_BYTES`: 64
bytes with AVX-512, 16 float32 or 8 float64; 32 bytes otherwise). Group by group of ``B``
vectors of pixels it keeps the ``F x B`` sums in registers while it runs over every row ``r``
of the filters (every channel and tap): ``B`` vector loads of the input, one broadcast weight
per filter and ``F x B`` fused multiply-adds per ``r``. The sums start at zero and add the
terms in the order of ``r``, one fused multiply-add each, in the input's dtype (float32 stays
float32); the bias is added last, in registers.

The caller guarantees the bounds (nothing is checked here): ``xp`` holds ``t0 + max(offs) +
nq * B * lanes`` values, ``acc`` is C-contiguous with rows ``am .. am + F - 1`` of at least
``a0 + nq * B * lanes``, ``w`` is C-contiguous with rows ``m .. m + F - 1`` of at least ``K``
columns, ``bias`` has rows ``m .. m + F - 1`` and ``offs`` has ``K`` entries. Only
engine-made constants reach the generated code.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.binding import get_host_cpu_features
from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic


def _vector_bytes() -> int:
    """64 when the target Numba compiles for has AVX-512 (32 vector registers), else 32 (AVX2,
    16 registers; other machines split the vectors as LLVM legalizes them)."""
    feats = config.CPU_FEATURES
    if feats is None:
        feats = get_host_cpu_features().flatten()
    return 64 if "+avx512f" in feats.split(",") else 32


#: Bytes of one vector of the tiles (16 or 8 float32).
VEC_BYTES = _vector_bytes()
#: Vectors of pixels per group of the wide tiles: 4 filters x 4 vectors = 16 accumulator
#: registers of 32 with AVX-512, 4 x 3 = 12 of 16 otherwise (beside the loads and the broadcast).
WIDE = 4 if VEC_BYTES == 64 else 3


def _accepts(xp, offs, w, acc, bias, ints) -> bool:
    return (
        all(isinstance(a, types.Array) and a.layout == "C" for a in (xp, offs, w, acc, bias))
        and xp.dtype in (types.float32, types.float64)
        and w.dtype == xp.dtype
        and acc.dtype == xp.dtype
        and bias.dtype == xp.dtype
        and bias.ndim == 1
        and offs.dtype == types.int64
        and xp.ndim == 1
        and offs.ndim == 1
        and w.ndim == 2
        and acc.ndim == 2
        and all(isinstance(v, types.Integer) for v in ints)
    )


def _tile(nf: int, nb: int, relu: bool = False):
    """The intrinsic of ``nf`` filters by ``nb`` vectors (see the module docstring); with
    ``relu`` it takes one more argument last, ``rel`` (acc's shape and dtype), and writes the
    engine's Relu of each value (``v`` above zero, else ``v * 0``) there too."""

    def typer(typingctx, xp, offs, w, acc, bias, m, am, K, t0, a0, nq, rel):
        if not _accepts(xp, offs, w, acc, bias, (m, am, K, t0, a0, nq)):
            return None
        if relu != (rel is not None) or (relu and rel != acc):
            return None
        sig = types.void(xp, offs, w, acc, bias, m, am, K, t0, a0, nq, *([rel] if relu else []))

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            mv, amv, kv, t0v, a0v, nqv = (
                context.cast(builder, v, t, types.int64)
                for v, t in zip(args[5:11], signature.args[5:11])
            )
            fty = context.get_value_type(xp.dtype)
            vl = VEC_BYTES * 8 // xp.dtype.bitwidth
            vty = ir.VectorType(fty, vl)
            vptr = vty.as_pointer()
            fma = cgutils.get_or_insert_function(
                builder.module,
                ir.FunctionType(vty, [vty, vty, vty]),
                f"llvm.fma.v{vl}f{xp.dtype.bitwidth}",
            )
            xa, oa, wa, aa, ba = (
                context.make_array(t)(context, builder, v)
                for t, v in zip(signature.args[:5], args[:5])
            )
            if relu:
                ra = context.make_array(signature.args[11])(context, builder, args[11])
            ldw = cgutils.unpack_tuple(builder, wa.shape, 2)[1]
            lda = cgutils.unpack_tuple(builder, aa.shape, 2)[1]
            accs = [[cgutils.alloca_once(builder, vty) for _ in range(nb)] for _ in range(nf)]
            zero = ir.Constant(vty, None)
            undef = ir.Constant(vty, ir.Undefined)
            splat = ir.Constant(ir.VectorType(ir.IntType(32), vl), [0] * vl)
            wrows = [
                builder.gep(wa.data, [builder.mul(builder.add(mv, ir.Constant(i64, f)), ldw)])
                for f in range(nf)
            ]
            with cgutils.for_range(builder, nqv) as g:
                gbase = builder.mul(g.index, ir.Constant(i64, nb * vl))
                for row in accs:
                    for a in row:
                        builder.store(zero, a)
                xbase = builder.add(t0v, gbase)
                with cgutils.for_range(builder, kv) as r:
                    off = builder.load(builder.gep(oa.data, [r.index]))
                    p = builder.gep(xa.data, [builder.add(xbase, off)])
                    xs = []
                    for j in range(nb):
                        pj = builder.gep(p, [ir.Constant(i64, j * vl)])
                        ld = builder.load(builder.bitcast(pj, vptr))
                        ld.align = xp.dtype.bitwidth // 8
                        xs.append(ld)
                    for f in range(nf):
                        s = builder.load(builder.gep(wrows[f], [r.index]))
                        one = builder.insert_element(undef, s, ir.Constant(i64, 0))
                        wb = builder.shuffle_vector(one, undef, splat)
                        for j in range(nb):
                            a = accs[f][j]
                            builder.store(builder.call(fma, [wb, xs[j], builder.load(a)]), a)
                for f in range(nf):
                    bs = builder.load(builder.gep(ba.data, [builder.add(mv, ir.Constant(i64, f))]))
                    one = builder.insert_element(undef, bs, ir.Constant(i64, 0))
                    bv = builder.shuffle_vector(one, undef, splat)
                    arow = builder.add(amv, ir.Constant(i64, f))
                    at = builder.add(builder.mul(arow, lda), builder.add(a0v, gbase))
                    row = builder.gep(aa.data, [at])
                    if relu:
                        rrow = builder.gep(ra.data, [at])
                    for j in range(nb):
                        pj = builder.gep(row, [ir.Constant(i64, j * vl)])
                        v = builder.fadd(builder.load(accs[f][j]), bv)
                        st = builder.store(v, builder.bitcast(pj, vptr))
                        st.align = xp.dtype.bitwidth // 8
                        if relu:
                            pos = builder.fcmp_ordered(">", v, zero)
                            rv = builder.select(pos, v, builder.fmul(v, zero))
                            rj = builder.gep(rrow, [ir.Constant(i64, j * vl)])
                            st = builder.store(rv, builder.bitcast(rj, vptr))
                            st.align = xp.dtype.bitwidth // 8
            return context.get_dummy_value()

        return sig, codegen

    # (no default argument: Numba's lowering of an intrinsic's call would look it up)
    if relu:

        def tile(typingctx, xp, offs, w, acc, bias, m, am, K, t0, a0, nq, rel):
            return typer(typingctx, xp, offs, w, acc, bias, m, am, K, t0, a0, nq, rel)

    else:

        def tile(typingctx, xp, offs, w, acc, bias, m, am, K, t0, a0, nq):
            return typer(typingctx, xp, offs, w, acc, bias, m, am, K, t0, a0, nq, None)

    tile.__name__ = f"tile_{nf}_{nb}" + ("_relu" if relu else "")
    return intrinsic(tile)


#: Four filters by :data:`WIDE` vectors, four filters by one vector, and one filter by each.
tile_4_wide = _tile(4, WIDE)
tile_4_1 = _tile(4, 1)
tile_1_wide = _tile(1, WIDE)
tile_1_1 = _tile(1, 1)
#: The same, also writing the Relu of each value into their last argument.
tile_4_wide_relu = _tile(4, WIDE, True)
tile_4_1_relu = _tile(4, 1, True)
tile_1_wide_relu = _tile(1, WIDE, True)
tile_1_1_relu = _tile(1, 1, True)
