package dgr.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code e^x} for {@code x ≤ 0} (softmax weights), from additions, multiplies and FMAs only, so a
 * lane and the scalar form give the same bits on every machine and in every compilation state
 * (the Vector API's own {@code EXP} calls a platform library when compiled and {@code Math.exp}
 * when interpreted, which may differ). Cephes' {@code expf}: {@code x = k·ln2 + r} with
 * {@code k} rounded to nearest (the 1.5·2^23 trick), {@code ln2} split in two so {@code r} is
 * exact, a degree-7 polynomial in {@code r} (relative error about 1e-7), times {@code 2^k} built
 * from its bits. Inputs below −87 give 0 (so no weight is subnormal: Intel cores take a
 * microcode assist per FMA on one), −∞ gives 0, NaN stays NaN.
 *
 * <p><b>No vector crosses a call</b>, here or in the engine's other kernels (they point here). C2
 * boxes a vector passed to or returned from a method it did not inline, an allocation per call,
 * and whether it inlines a helper depends on what it compiled before (the helper on its own first,
 * a caller past its node budget, a call site it found too cold); a helper taking vectors of both
 * widths also gets a mixed type profile, under which C2 leaves its vector operations uncompiled
 * (30–70× slower). So no method takes or returns a vector: vectors go between methods through
 * arrays. The vector form that {@link #exp(float[], int, int, float)} replaced, {@code exp(FloatVector)},
 * was boxed where a call site was too cold to inline it ({@link OnlineSoftmax}: 4.8 MB of garbage
 * per llama-1b decode step); docs/engine.md ("No allocation per token") has the measurements.
 */
public final class Exp {
    private Exp() {}

    static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    static final VectorSpecies<Float> W = FloatVector.SPECIES_512;
    private static final float LOG2E = 1.44269504088896341f, MAGIC = 12582912f;
    private static final float LN2_HI = 0.693359375f, LN2_LO = -2.12194440e-4f;
    private static final float P0 = 1.9875691500e-4f, P1 = 1.3981999507e-3f, P2 = 8.3334519073e-3f, P3 = 4.1665795894e-2f,
            P4 = 1.6666665459e-1f, P5 = 5.0000001201e-1f;
    /** Below this the result would be subnormal: it is 0. */
    public static final float FLOOR = -87f;

    /** {@code e^x} for {@code x ≤ 0}, the same bits as each value of {@link #exp(float[], int, int, float)}. */
    public static float exp(float x) {
        if (!(x >= FLOOR)) return x != x ? x : 0f;
        float k = Math.fma(x, LOG2E, MAGIC) - MAGIC;
        float r = Math.fma(k, -LN2_HI, x);
        r = Math.fma(k, -LN2_LO, r);
        float p = Math.fma(P0, r, P1);
        p = Math.fma(p, r, P2);
        p = Math.fma(p, r, P3);
        p = Math.fma(p, r, P4);
        p = Math.fma(p, r, P5);
        p = Math.fma(p, r * r, r) + 1f;
        return p * Float.intBitsToFloat(((int) k + 127) << 23);
    }

    /**
     * {@code a[i] = e^(a[i] − sub)} for {@code i} in {@code [from, to)} ({@code to − from} a multiple
     * of 8), each value the same bits as {@link #exp(float)} of it: 16 lanes at a time where 512-bit
     * vectors run ({@link SimdAttention#WIDE}), then 8. {@code sub = 0} is {@code e^a} ({@code x − 0}
     * is {@code x}, {@code −0} included).
     *
     * <p>Arrays in and out, the loops inside: no vector crosses the call (the class doc says why), so
     * a call that is not inlined costs a call per range, nothing more.
     */
    public static void exp(float[] a, int from, int to, float sub) {
        int i = SimdAttention.WIDE ? lanes16(a, from, to, sub) : from;
        lanes8(a, i, to, sub);
    }

    /** {@link #exp(float[], int, int, float)} 8 lanes at a time from {@code i} to {@code to}. */
    static void lanes8(float[] a, int i, int to, float sub) {
        VectorSpecies<Float> s = F;
        for (; i < to; i += 8) {
            FloatVector x = FloatVector.fromArray(s, a, i).sub(sub);
            FloatVector xc = x.max(FLOOR);
            FloatVector k = xc.fma(LOG2E, MAGIC).sub(MAGIC);
            FloatVector r = k.fma(FloatVector.broadcast(s, -LN2_HI), xc);
            r = k.fma(FloatVector.broadcast(s, -LN2_LO), r);
            FloatVector p = FloatVector.broadcast(s, P0).fma(r, FloatVector.broadcast(s, P1));
            p = p.fma(r, FloatVector.broadcast(s, P2));
            p = p.fma(r, FloatVector.broadcast(s, P3));
            p = p.fma(r, FloatVector.broadcast(s, P4));
            p = p.fma(r, FloatVector.broadcast(s, P5));
            p = p.fma(r.mul(r), r).add(1f);
            IntVector bits = ((IntVector) k.convert(VectorOperators.F2I, 0)).add(127).lanewise(VectorOperators.LSHL, 23);
            FloatVector y = p.mul(bits.reinterpretAsFloats());
            // x < FLOOR (−∞ included) → 0; NaN: max(NaN, FLOOR) is NaN, carried through.
            y.blend(0f, x.compare(VectorOperators.LT, FLOOR)).intoArray(a, i);
        }
    }

    /**
     * {@link #lanes8}'s steps 16 lanes at a time while 16 values are left; returns where it stopped.
     * A method of its own, with its own species constant: one body run at both widths would get the
     * mixed type profile {@link #exp(float[], int, int, float)} explains.
     */
    static int lanes16(float[] a, int i, int to, float sub) {
        VectorSpecies<Float> s = W;
        for (; i + 16 <= to; i += 16) {
            FloatVector x = FloatVector.fromArray(s, a, i).sub(sub);
            FloatVector xc = x.max(FLOOR);
            FloatVector k = xc.fma(LOG2E, MAGIC).sub(MAGIC);
            FloatVector r = k.fma(FloatVector.broadcast(s, -LN2_HI), xc);
            r = k.fma(FloatVector.broadcast(s, -LN2_LO), r);
            FloatVector p = FloatVector.broadcast(s, P0).fma(r, FloatVector.broadcast(s, P1));
            p = p.fma(r, FloatVector.broadcast(s, P2));
            p = p.fma(r, FloatVector.broadcast(s, P3));
            p = p.fma(r, FloatVector.broadcast(s, P4));
            p = p.fma(r, FloatVector.broadcast(s, P5));
            p = p.fma(r.mul(r), r).add(1f);
            IntVector bits = ((IntVector) k.convert(VectorOperators.F2I, 0)).add(127).lanewise(VectorOperators.LSHL, 23);
            FloatVector y = p.mul(bits.reinterpretAsFloats());
            y.blend(0f, x.compare(VectorOperators.LT, FLOOR)).intoArray(a, i);
        }
        return i;
    }
}
