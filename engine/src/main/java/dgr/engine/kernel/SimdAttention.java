package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The attention kernels of {@code java-simd} and {@code java-q8} written for throughput: each output
 * element keeps the one sequence of float operations {@link Kernels#scores8} and
 * {@link Kernels#weightedV} state (a score: FMAs over {@code d} in order from +0; an output value:
 * FMAs over positions in order), so the bits are those of one block or one 8-lane chunk at a
 * time. What changes is how many of those independent sequences run side by side: an FMA takes
 * four cycles and a core issues two a cycle, so four chains (four query heads of one K/V head)
 * left half the FMA slots empty, where a long context spends most of its time.
 * Scores take two blocks of 8 positions for four heads (8 chains, each K vector still loaded once
 * for the four heads; four blocks, 16 chains, made C2 box vectors, a few KB per decode step);
 * weighted values take 16 lanes per vector where the CPU has
 * 512-bit vectors ({@link #WIDE}), a whole 64-value head per four vectors, for four heads (16
 * chains, each V row loaded once for the four heads).
 */
final class SimdAttention {
    private SimdAttention() {}

    static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    static final VectorSpecies<Float> W = FloatVector.SPECIES_512;
    /** 512-bit vectors run natively here (AVX-512): without them, 16-lane vectors would be emulated. */
    static final boolean WIDE = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512;

    /**
     * {@link Kernels#scores8} over {@code blocks} consecutive blocks of 8 positions, block {@code b}
     * at {@code kBase + b·blockStride}, its scores at {@code sc[so + 8b ..]}.
     */
    static void scores(float[] q, int qo, int heads, int hd, float[] k, int kBase, int blockStride, int blocks,
                       float[] sc, int so, int scStride) {
        int b = 0;
        for (; b + 2 <= blocks; b += 2) scores2(q, qo, heads, hd, k, kBase + b * blockStride, blockStride, sc, so + 8 * b, scStride);
        for (; b < blocks; b++) scores1(q, qo, heads, hd, k, kBase + b * blockStride, sc, so + 8 * b, scStride);
    }

    /** Two blocks: four heads at a time (8 chains), then one head at a time. */
    private static void scores2(float[] q, int qo, int heads, int hd, float[] k, int kb, int bs, float[] sc, int so, int scStride) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            int q0 = qo + g * hd, q1 = q0 + hd, q2 = q1 + hd, q3 = q2 + hd;
            FloatVector z = FloatVector.zero(F);
            FloatVector a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z;
            for (int d = 0; d < hd; d++) {
                int o = kb + 8 * d;
                FloatVector k0 = FloatVector.fromArray(F, k, o), k1 = FloatVector.fromArray(F, k, o + bs);
                FloatVector x = FloatVector.broadcast(F, q[q0 + d]);
                a00 = k0.fma(x, a00);
                a01 = k1.fma(x, a01);
                x = FloatVector.broadcast(F, q[q1 + d]);
                a10 = k0.fma(x, a10);
                a11 = k1.fma(x, a11);
                x = FloatVector.broadcast(F, q[q2 + d]);
                a20 = k0.fma(x, a20);
                a21 = k1.fma(x, a21);
                x = FloatVector.broadcast(F, q[q3 + d]);
                a30 = k0.fma(x, a30);
                a31 = k1.fma(x, a31);
            }
            int o = so + g * scStride;
            a00.intoArray(sc, o);
            a01.intoArray(sc, o + 8);
            a10.intoArray(sc, o + scStride);
            a11.intoArray(sc, o + scStride + 8);
            a20.intoArray(sc, o + 2 * scStride);
            a21.intoArray(sc, o + 2 * scStride + 8);
            a30.intoArray(sc, o + 3 * scStride);
            a31.intoArray(sc, o + 3 * scStride + 8);
        }
        for (; g < heads; g++) {
            int q0 = qo + g * hd;
            FloatVector a0 = FloatVector.zero(F), a1 = a0;
            for (int d = 0; d < hd; d++) {
                int o = kb + 8 * d;
                FloatVector x = FloatVector.broadcast(F, q[q0 + d]);
                a0 = FloatVector.fromArray(F, k, o).fma(x, a0);
                a1 = FloatVector.fromArray(F, k, o + bs).fma(x, a1);
            }
            a0.intoArray(sc, so + g * scStride);
            a1.intoArray(sc, so + g * scStride + 8);
        }
    }

    /** One block: {@link Kernels#scores8}, four heads at a time. */
    static void scores1(float[] q, int qo, int heads, int hd, float[] k, int kBase, float[] sc, int so, int scStride) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            int q0 = qo + g * hd, q1 = q0 + hd, q2 = q1 + hd, q3 = q2 + hd;
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0; d < hd; d++) {
                FloatVector kv = FloatVector.fromArray(F, k, kBase + 8 * d);
                a0 = kv.fma(FloatVector.broadcast(F, q[q0 + d]), a0);
                a1 = kv.fma(FloatVector.broadcast(F, q[q1 + d]), a1);
                a2 = kv.fma(FloatVector.broadcast(F, q[q2 + d]), a2);
                a3 = kv.fma(FloatVector.broadcast(F, q[q3 + d]), a3);
            }
            int o = so + g * scStride;
            a0.intoArray(sc, o);
            a1.intoArray(sc, o + scStride);
            a2.intoArray(sc, o + 2 * scStride);
            a3.intoArray(sc, o + 3 * scStride);
        }
        for (; g < heads; g++) {
            int q0 = qo + g * hd;
            FloatVector a0 = FloatVector.zero(F);
            for (int d = 0; d < hd; d++) a0 = FloatVector.fromArray(F, k, kBase + 8 * d).fma(FloatVector.broadcast(F, q[q0 + d]), a0);
            a0.intoArray(sc, so + g * scStride);
        }
    }

    /**
     * {@link Kernels#weightedV}: 16 lanes per vector where {@link #WIDE}; else 8, two 8-value chunks
     * of each head at a time ({@link #weighted2x8}).
     */
    static void weightedV(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vBase, int kvd,
                          float[] out, int oo, int hd) {
        int c = 0;
        if (WIDE) {
            for (; c + 64 <= hd; c += 64) weighted64(w, wo, wStride, heads, t0, t1, v, vBase + c, kvd, out, oo + c, hd);
            for (; c + 16 <= hd; c += 16) weighted16(w, wo, wStride, heads, t0, t1, v, vBase + c, kvd, out, oo + c, hd);
        } else {
            for (; c + 16 <= hd; c += 16) weighted2x8(w, wo, wStride, heads, t0, t1, v, vBase + c, kvd, out, oo + c, hd);
        }
        for (; c < hd; c += 8) weighted8(w, wo, wStride, heads, t0, t1, v, vBase + c, kvd, out, oo + c, hd);
    }

    /**
     * 16 values (two 8-lane vectors) of each head, four heads at a time, then one: the 256-bit kernel
     * with 8 chains (four heads × two chunks; two FMA pipes of four cycles' latency keep eight in flight),
     * each V vector loaded once for the four heads and each weight broadcast once for the two chunks.
     * Four chains ({@link #weighted8}) left half the FMA slots empty. Eleven registers of AVX2's 16.
     */
    private static void weighted2x8(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vb, int kvd,
                                    float[] out, int ob, int hd) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            int w0 = wo + g * wStride, w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
            int o0 = ob + g * hd, o1 = o0 + hd, o2 = o1 + hd, o3 = o2 + hd;
            FloatVector a00 = FloatVector.fromArray(F, out, o0), a01 = FloatVector.fromArray(F, out, o0 + 8);
            FloatVector a10 = FloatVector.fromArray(F, out, o1), a11 = FloatVector.fromArray(F, out, o1 + 8);
            FloatVector a20 = FloatVector.fromArray(F, out, o2), a21 = FloatVector.fromArray(F, out, o2 + 8);
            FloatVector a30 = FloatVector.fromArray(F, out, o3), a31 = FloatVector.fromArray(F, out, o3 + 8);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) {
                FloatVector x0 = FloatVector.fromArray(F, v, vo), x1 = FloatVector.fromArray(F, v, vo + 8);
                FloatVector y = FloatVector.broadcast(F, w[w0 + t]);
                a00 = x0.fma(y, a00);
                a01 = x1.fma(y, a01);
                y = FloatVector.broadcast(F, w[w1 + t]);
                a10 = x0.fma(y, a10);
                a11 = x1.fma(y, a11);
                y = FloatVector.broadcast(F, w[w2 + t]);
                a20 = x0.fma(y, a20);
                a21 = x1.fma(y, a21);
                y = FloatVector.broadcast(F, w[w3 + t]);
                a30 = x0.fma(y, a30);
                a31 = x1.fma(y, a31);
            }
            a00.intoArray(out, o0);
            a01.intoArray(out, o0 + 8);
            a10.intoArray(out, o1);
            a11.intoArray(out, o1 + 8);
            a20.intoArray(out, o2);
            a21.intoArray(out, o2 + 8);
            a30.intoArray(out, o3);
            a31.intoArray(out, o3 + 8);
        }
        for (; g < heads; g++) {
            int w0 = wo + g * wStride, o0 = ob + g * hd;
            FloatVector a0 = FloatVector.fromArray(F, out, o0), a1 = FloatVector.fromArray(F, out, o0 + 8);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) {
                FloatVector y = FloatVector.broadcast(F, w[w0 + t]);
                a0 = FloatVector.fromArray(F, v, vo).fma(y, a0);
                a1 = FloatVector.fromArray(F, v, vo + 8).fma(y, a1);
            }
            a0.intoArray(out, o0);
            a1.intoArray(out, o0 + 8);
        }
    }

    /** 64 values (four 16-lane vectors) of each head: four heads at a time (16 chains), then one. */
    private static void weighted64(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vb, int kvd,
                                   float[] out, int ob, int hd) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            int w0 = wo + g * wStride, w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
            int o0 = ob + g * hd, o1 = o0 + hd, o2 = o1 + hd, o3 = o2 + hd;
            FloatVector a00 = FloatVector.fromArray(W, out, o0), a01 = FloatVector.fromArray(W, out, o0 + 16);
            FloatVector a02 = FloatVector.fromArray(W, out, o0 + 32), a03 = FloatVector.fromArray(W, out, o0 + 48);
            FloatVector a10 = FloatVector.fromArray(W, out, o1), a11 = FloatVector.fromArray(W, out, o1 + 16);
            FloatVector a12 = FloatVector.fromArray(W, out, o1 + 32), a13 = FloatVector.fromArray(W, out, o1 + 48);
            FloatVector a20 = FloatVector.fromArray(W, out, o2), a21 = FloatVector.fromArray(W, out, o2 + 16);
            FloatVector a22 = FloatVector.fromArray(W, out, o2 + 32), a23 = FloatVector.fromArray(W, out, o2 + 48);
            FloatVector a30 = FloatVector.fromArray(W, out, o3), a31 = FloatVector.fromArray(W, out, o3 + 16);
            FloatVector a32 = FloatVector.fromArray(W, out, o3 + 32), a33 = FloatVector.fromArray(W, out, o3 + 48);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) {
                FloatVector x0 = FloatVector.fromArray(W, v, vo), x1 = FloatVector.fromArray(W, v, vo + 16);
                FloatVector x2 = FloatVector.fromArray(W, v, vo + 32), x3 = FloatVector.fromArray(W, v, vo + 48);
                FloatVector y = FloatVector.broadcast(W, w[w0 + t]);
                a00 = x0.fma(y, a00);
                a01 = x1.fma(y, a01);
                a02 = x2.fma(y, a02);
                a03 = x3.fma(y, a03);
                y = FloatVector.broadcast(W, w[w1 + t]);
                a10 = x0.fma(y, a10);
                a11 = x1.fma(y, a11);
                a12 = x2.fma(y, a12);
                a13 = x3.fma(y, a13);
                y = FloatVector.broadcast(W, w[w2 + t]);
                a20 = x0.fma(y, a20);
                a21 = x1.fma(y, a21);
                a22 = x2.fma(y, a22);
                a23 = x3.fma(y, a23);
                y = FloatVector.broadcast(W, w[w3 + t]);
                a30 = x0.fma(y, a30);
                a31 = x1.fma(y, a31);
                a32 = x2.fma(y, a32);
                a33 = x3.fma(y, a33);
            }
            a00.intoArray(out, o0);
            a01.intoArray(out, o0 + 16);
            a02.intoArray(out, o0 + 32);
            a03.intoArray(out, o0 + 48);
            a10.intoArray(out, o1);
            a11.intoArray(out, o1 + 16);
            a12.intoArray(out, o1 + 32);
            a13.intoArray(out, o1 + 48);
            a20.intoArray(out, o2);
            a21.intoArray(out, o2 + 16);
            a22.intoArray(out, o2 + 32);
            a23.intoArray(out, o2 + 48);
            a30.intoArray(out, o3);
            a31.intoArray(out, o3 + 16);
            a32.intoArray(out, o3 + 32);
            a33.intoArray(out, o3 + 48);
        }
        for (; g < heads; g++) {
            int w0 = wo + g * wStride, o0 = ob + g * hd;
            FloatVector a0 = FloatVector.fromArray(W, out, o0), a1 = FloatVector.fromArray(W, out, o0 + 16);
            FloatVector a2 = FloatVector.fromArray(W, out, o0 + 32), a3 = FloatVector.fromArray(W, out, o0 + 48);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) {
                FloatVector y = FloatVector.broadcast(W, w[w0 + t]);
                a0 = FloatVector.fromArray(W, v, vo).fma(y, a0);
                a1 = FloatVector.fromArray(W, v, vo + 16).fma(y, a1);
                a2 = FloatVector.fromArray(W, v, vo + 32).fma(y, a2);
                a3 = FloatVector.fromArray(W, v, vo + 48).fma(y, a3);
            }
            a0.intoArray(out, o0);
            a1.intoArray(out, o0 + 16);
            a2.intoArray(out, o0 + 32);
            a3.intoArray(out, o0 + 48);
        }
    }

    /** 16 values of each head: four heads at a time, then one. */
    private static void weighted16(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vb, int kvd,
                                   float[] out, int ob, int hd) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            int w0 = wo + g * wStride, w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
            int o0 = ob + g * hd, o1 = o0 + hd, o2 = o1 + hd, o3 = o2 + hd;
            FloatVector a0 = FloatVector.fromArray(W, out, o0), a1 = FloatVector.fromArray(W, out, o1);
            FloatVector a2 = FloatVector.fromArray(W, out, o2), a3 = FloatVector.fromArray(W, out, o3);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) {
                FloatVector x = FloatVector.fromArray(W, v, vo);
                a0 = x.fma(FloatVector.broadcast(W, w[w0 + t]), a0);
                a1 = x.fma(FloatVector.broadcast(W, w[w1 + t]), a1);
                a2 = x.fma(FloatVector.broadcast(W, w[w2 + t]), a2);
                a3 = x.fma(FloatVector.broadcast(W, w[w3 + t]), a3);
            }
            a0.intoArray(out, o0);
            a1.intoArray(out, o1);
            a2.intoArray(out, o2);
            a3.intoArray(out, o3);
        }
        for (; g < heads; g++) {
            int w0 = wo + g * wStride, o0 = ob + g * hd;
            FloatVector a0 = FloatVector.fromArray(W, out, o0);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) a0 = FloatVector.fromArray(W, v, vo).fma(FloatVector.broadcast(W, w[w0 + t]), a0);
            a0.intoArray(out, o0);
        }
    }

    /**
     * 8 values of each head: four heads at a time, then one (the 256-bit tail past {@link #weighted2x8}). Written out beside
     * {@link #weighted16} rather than shared with a species parameter: C2 compiles vector code only for a
     * constant species, and one body called with both widths got a mixed profile and was left uncompiled
     * (as {@link Exp#exp(float[], int, int, float)} says of the exp: 30-70x slower).
     */
    private static void weighted8(float[] w, int wo, int wStride, int heads, int t0, int t1, float[] v, int vb, int kvd,
                                  float[] out, int ob, int hd) {
        int g = 0;
        for (; g + 4 <= heads; g += 4) {
            int w0 = wo + g * wStride, w1 = w0 + wStride, w2 = w1 + wStride, w3 = w2 + wStride;
            int o0 = ob + g * hd, o1 = o0 + hd, o2 = o1 + hd, o3 = o2 + hd;
            FloatVector a0 = FloatVector.fromArray(F, out, o0), a1 = FloatVector.fromArray(F, out, o1);
            FloatVector a2 = FloatVector.fromArray(F, out, o2), a3 = FloatVector.fromArray(F, out, o3);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) {
                FloatVector x = FloatVector.fromArray(F, v, vo);
                a0 = x.fma(FloatVector.broadcast(F, w[w0 + t]), a0);
                a1 = x.fma(FloatVector.broadcast(F, w[w1 + t]), a1);
                a2 = x.fma(FloatVector.broadcast(F, w[w2 + t]), a2);
                a3 = x.fma(FloatVector.broadcast(F, w[w3 + t]), a3);
            }
            a0.intoArray(out, o0);
            a1.intoArray(out, o1);
            a2.intoArray(out, o2);
            a3.intoArray(out, o3);
        }
        for (; g < heads; g++) {
            int w0 = wo + g * wStride, o0 = ob + g * hd;
            FloatVector a0 = FloatVector.fromArray(F, out, o0);
            for (int t = t0, vo = vb; t < t1; t++, vo += kvd) a0 = FloatVector.fromArray(F, v, vo).fma(FloatVector.broadcast(F, w[w0 + t]), a0);
            a0.intoArray(out, o0);
        }
    }
}
