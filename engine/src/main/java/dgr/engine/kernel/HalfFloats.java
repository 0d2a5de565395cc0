package dgr.engine.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The compact K/V cache types' rounding (on store, scalar: one row per token) and their widening
 * back to floats (on every attention read, 8 lanes at a time on the Vector API). Widening is exact,
 * so the lanes and {@link Float#float16ToFloat} agree to the bit on every input.
 */
public final class HalfFloats {
    private HalfFloats() {}

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
    private static final VectorSpecies<Short> S = ShortVector.SPECIES_128;
    private static final VectorSpecies<Byte> B = ByteVector.SPECIES_64;
    /** Where 512-bit vectors run natively ({@link SimdAttention#WIDE}) the q8_0 widening takes 16 lanes at a time. */
    private static final VectorSpecies<Float> F16L = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final int EXP_F16 = 0x7c00 << 13;
    /** 2^-14 as a float: what an f16 subnormal's bits land on before the correction. */
    private static final float MAGIC = Float.intBitsToFloat(113 << 23);

    /** bf16 of {@code f}: round to nearest, ties to even; NaN becomes the quiet NaN {@code 0x7fc0}. */
    public static short bf16(float f) {
        int b = Float.floatToRawIntBits(f);
        if ((b & 0x7fffffff) > 0x7f800000) return (short) 0x7fc0;
        return (short) ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16);
    }

    /** {@code rint(x · id)} as a signed byte (|x·id| ≤ 127 for a block's own values). */
    public static byte q8(float x, float id) {
        return (byte) Math.max(-127, Math.min(127, (int) Math.rint(x * id)));
    }

    /**
     * Eight f16 values {@code src[so ..]} widened into {@code dst[o ..]}: the exponent rebiased by 112,
     * infinities and NaNs by 112 more, zeros and subnormals renormalised through a subtraction of
     * 2^-14 (exact: no subnormal float ever enters the arithmetic, which Intel cores would run by
     * microcode). Arrays in and out: no vector crosses a call ({@link Exp} says why).
     */
    static void f16(short[] src, int so, float[] dst, int o) {
        IntVector h = (IntVector) ShortVector.fromArray(S, src, so).convertShape(VectorOperators.S2I, I, 0);
        IntVector m = h.and(0x7fff).lanewise(VectorOperators.LSHL, 13);
        IntVector e = m.and(EXP_F16);
        IntVector w = m.add(112 << 23);
        w = w.blend(w.add(112 << 23), e.compare(VectorOperators.EQ, EXP_F16));
        IntVector sub = w.add(1 << 23).reinterpretAsFloats().sub(MAGIC).reinterpretAsInts();
        w = w.blend(sub, e.compare(VectorOperators.EQ, 0));
        w.or(h.and(0x8000).lanewise(VectorOperators.LSHL, 16)).reinterpretAsFloats().intoArray(dst, o);
    }

    /**
     * {@code dst[o + c] = f16 src[so + c]} for {@code c < n}. A plain loop of
     * {@link Float#float16ToFloat}: C2 compiles it to the CPU's own conversion (F16C's
     * {@code vcvtph2ps}, 8 or 16 lanes an instruction), 3–7× faster here than the Vector API's bit
     * arithmetic ({@link #f16}), which has no half-float conversion; both give the same bits.
     */
    public static void f16ToFloats(short[] src, int so, float[] dst, int o, int n) {
        for (int c = 0; c < n; c++) dst[o + c] = Float.float16ToFloat(src[so + c]);
    }

    /** {@link #f16ToFloats} through {@link #f16}'s lanes ({@code n} a multiple of 8): for tests. */
    static void f16ToFloatsByLanes(short[] src, int so, float[] dst, int o, int n) {
        for (int c = 0; c < n; c += 8) f16(src, so + c, dst, o + c);
    }

    /** {@code dst[o + c] = bf16 src[so + c]} for {@code c < n} ({@code n} a multiple of 8): the bits moved up 16. */
    public static void bf16ToFloats(short[] src, int so, float[] dst, int o, int n) {
        for (int c = 0; c < n; c += 8) {
            ((IntVector) ShortVector.fromArray(S, src, so + c).convertShape(VectorOperators.S2I, I, 0))
                    .lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(dst, o + c);
        }
    }

    /**
     * One position's q8_0 values, elements {@code [i0, i0 + n)} of its row ({@code n}, {@code i0}
     * multiples of 8): {@code dst[o + c] = q[qo + c] · f16(d[dRow + (i0 + c)/32])}.
     */
    public static void q8ToFloats(byte[] q, int qo, short[] d, int dRow, int i0, int n, float[] dst, int o) {
        for (int c = 0; c < n; ) {
            float s = Float.float16ToFloat(d[dRow + (i0 + c) / 32]);
            if (SimdAttention.WIDE && (i0 + c) % 16 == 0 && c + 16 <= n) {
                // 16 values of one block of 32 per instruction where 512-bit vectors run: half the
                // conversions of 8 lanes, and a q8_0 cache's decode step is bound by them, not by memory.
                FloatVector x = (FloatVector) ByteVector.fromArray(B16, q, qo + c).convertShape(VectorOperators.B2F, F16L, 0);
                x.mul(s).intoArray(dst, o + c);
                c += 16;
            } else {
                FloatVector x = (FloatVector) ByteVector.fromArray(B, q, qo + c).convertShape(VectorOperators.B2F, F, 0);
                x.mul(s).intoArray(dst, o + c);
                c += 8;
            }
        }
    }

    /**
     * A block of 8 positions' q8_0 keys, position-minor: element {@code i} of the 8 positions at
     * {@code q[qBlock + 8i ..]}, the 8 positions' scales of value block {@code b} at
     * {@code d[dBlock + 8b ..]}; elements {@code [i0, i0 + n)} go to {@code dst[o + 8c ..]}.
     */
    public static void q8ToFloats8(byte[] q, int qBlock, short[] d, int dBlock, int i0, int n, float[] dst, int o) {
        // One scale vector per block of 32, never carried across blocks in a variable that may be
        // unset: C2 then keeps it in a register instead of boxing it (a boxed vector per element
        // made every decode step allocate). The 8 scales are widened by scalar conversions into the
        // slot of dst the block's first element is about to fill, then loaded as one vector: no vector
        // crosses a call (Exp says why; through a vector form of f16 one did, and in a decode step that
        // widens 16 positions at a time C2 left that call out of line: 10 MB per 16 steps of llama-tiny).
        // Float.float16ToFloat and f16 agree on every input (HalfFloatsTest).
        // Where 512-bit vectors run, two elements (16 bytes: 8 positions each) per conversion, the
        // block's 8 scales loaded twice over into one 16-lane vector.
        boolean wide = SimdAttention.WIDE && i0 % 2 == 0 && n % 2 == 0;
        for (int i = i0, end = i0 + n; i < end; ) {
            int blockEnd = Math.min(end, (i / 32 + 1) * 32), so = o + 8 * (i - i0), ds = dBlock + 8 * (i / 32);
            for (int p = 0; p < 8; p++) dst[so + p] = Float.float16ToFloat(d[ds + p]);
            if (wide) {
                System.arraycopy(dst, so, dst, so + 8, 8);
                FloatVector s = FloatVector.fromArray(F16L, dst, so);
                for (; i < blockEnd; i += 2) {
                    FloatVector x = (FloatVector) ByteVector.fromArray(B16, q, qBlock + 8 * i).convertShape(VectorOperators.B2F, F16L, 0);
                    x.mul(s).intoArray(dst, o + 8 * (i - i0));
                }
            } else {
                FloatVector s = FloatVector.fromArray(F, dst, so);
                for (; i < blockEnd; i++) {
                    FloatVector x = (FloatVector) ByteVector.fromArray(B, q, qBlock + 8 * i).convertShape(VectorOperators.B2F, F, 0);
                    x.mul(s).intoArray(dst, o + 8 * (i - i0));
                }
            }
        }
    }
}
