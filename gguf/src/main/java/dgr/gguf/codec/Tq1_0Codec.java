package dgr.gguf.codec;

import dgr.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * TQ1_0 (ternary, 1.69 bits per value): u8 qs[48]; u8 qh[4]; f16 d. Each byte packs trits base 3
 * as a fraction of 256 (ggml's "ceiling division by 243"), so trit {@code n} of byte {@code b} is
 * {@code ((b·3^n mod 256)·3) >> 8}. Bytes 0–31 give values {@code 32n + m} ({@code n} = 0..4),
 * bytes 32–47 values {@code 160 + 16n + m}, and qh's four bytes values {@code 240 + 4n + j}
 * ({@code n} = 0..3); each is {@code (trit − 1)·d}. quantize_row_tq1_0_ref: {@code d = amax},
 * trits {@code lroundf(x/d) + 1} packed most significant first, {@code (q·256 + 242) / 243}.
 */
final class Tq1_0Codec extends BlockLoop {
    private static final int[] POW3 = {1, 3, 9, 27, 81, 243};

    Tq1_0Codec() { super(GgmlType.TQ1_0); }

    private static int trit(int b, int n) {
        int q = (b * POW3[n]) & 0xFF;
        return (q * 3) >> 8;
    }

    @Override
    void decodeBlock(MemorySegment src, long off, float[] dst, int d) {
        float scale = Le.f16(src, off + 52);
        int y = d;
        for (int n = 0; n < 5; n++) for (int m = 0; m < 32; m++) dst[y++] = (float) (trit(Le.u8(src, off + m), n) - 1) * scale;
        for (int n = 0; n < 5; n++) for (int m = 0; m < 16; m++) dst[y++] = (float) (trit(Le.u8(src, off + 32 + m), n) - 1) * scale;
        for (int n = 0; n < 4; n++) for (int j = 0; j < 4; j++) dst[y++] = (float) (trit(Le.u8(src, off + 48 + j), n) - 1) * scale;
    }

    @Override
    void encodeBlock(float[] src, int s, MemorySegment dst, long off) {
        float amax = 0f;
        for (int j = 0; j < 256; j++) amax = Math.max(amax, Math.abs(src[s + j]));
        float id = amax != 0 ? 1.0f / amax : 0.0f;
        Le.putF16(dst, off + 52, amax);
        for (int m = 0; m < 32; m++) Le.put8(dst, off + m, pack(src, s + m, 32, 5, id, false));
        for (int m = 0; m < 16; m++) Le.put8(dst, off + 32 + m, pack(src, s + 160 + m, 16, 5, id, false));
        for (int j = 0; j < 4; j++) Le.put8(dst, off + 48 + j, pack(src, s + 240 + j, 4, 4, id, true));
    }

    /** {@code count} trits from {@code src[at + stride·n]}, most significant first, as one byte; four-trit bytes shifted up one trit. */
    private static int pack(float[] src, int at, int stride, int count, float id, boolean shift) {
        int q = 0;
        for (int n = 0; n < count; n++) q = (q * 3 + CRound.roundf(src[at + stride * n] * id) + 1) & 0xFF;
        if (shift) q = (q * 3) & 0xFF;
        return ((q * 256 + 242) / 243) & 0xFF;
    }
}
