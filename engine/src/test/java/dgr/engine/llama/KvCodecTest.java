package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.KvCacheType;
import dgr.engine.KvCacheTypes;
import dgr.engine.kernel.HalfFloats;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The K/V cache types round on store by their fixed rules and the attention's widening reads back
 * exactly what was stored, in the layouts {@link TiledAttention} reads.
 */
class KvCodecTest {
    static final int KVD = 128, HD = 64;

    @Test
    void bf16RoundsToNearestWithTiesToEven() {
        // Exactly halfway: down to the even 0x3f80, up to the even 0x3f82.
        assertThat(HalfFloats.bf16(Float.intBitsToFloat(0x3f808000))).isEqualTo((short) 0x3f80);
        assertThat(HalfFloats.bf16(Float.intBitsToFloat(0x3f818000))).isEqualTo((short) 0x3f82);
        assertThat(HalfFloats.bf16(Float.intBitsToFloat(0x3f808001))).isEqualTo((short) 0x3f81);
        assertThat(HalfFloats.bf16(Float.intBitsToFloat(0xbf807fff))).isEqualTo((short) 0xbf80);
        assertThat(HalfFloats.bf16(Float.MAX_VALUE)).isEqualTo((short) 0x7f80);
        assertThat(HalfFloats.bf16(Float.NaN)).isEqualTo((short) 0x7fc0);
    }

    @Test
    void q8BlocksScaleTheirLargestMagnitudeTo127WithAnF16Scale() {
        float[] row = new float[KVD];
        SplittableRandom rnd = new SplittableRandom(3);
        for (int i = 0; i < KVD; i++) row[i] = (float) rnd.nextDouble(-2, 2);
        row[5] = -3.75f; // block 0's largest magnitude
        for (int i = 64; i < 96; i++) row[i] = 0f; // block 2: all zero
        KvCodec c = KvCodec.of(KvCacheType.Q8_0, KVD, HD);
        Object page = c.newPage();
        c.storeV(page, 70, row, 0);
        float[] back = new float[KvLayout.PAGE_TOKENS * HD];
        c.decodeV(page, 6, 7, 0, 1, back);
        float d = Float.float16ToFloat(Float.floatToFloat16(3.75f / 127f));
        assertThat(back[6 * HD + 5]).isEqualTo(-127 * d);
        for (int i = 0; i < 32; i++) assertThat(back[6 * HD + i]).isEqualTo((float) Math.rint(row[i] * (127f / 3.75f)) * d);
        c.decodeV(page, 6, 7, 1, 2, back);
        for (int i = 0; i < 32; i++) assertThat(back[6 * HD + i]).as("zero block").isZero();
    }

    @ParameterizedTest
    @EnumSource(KvCacheType.class)
    void widenedTilesHoldExactlyTheRoundedValuesInTheLayoutsAttentionReads(KvCacheType type) {
        KvCodec c = KvCodec.of(type, KVD, HD);
        Object kPage = c.newPage(), vPage = c.newPage();
        SplittableRandom rnd = new SplittableRandom(5);
        float[][] rows = new float[KvLayout.PAGE_TOKENS][KVD];
        for (int j = 0; j < rows.length; j++) {
            for (int i = 0; i < KVD; i++) rows[j][i] = (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(-3, 3)));
            c.storeK(kPage, 128 + j, rows[j], 0);
            c.storeV(vPage, 128 + j, rows[j], 0);
        }
        float[] k = new float[KvLayout.PAGE_TOKENS * HD], v = new float[KvLayout.PAGE_TOKENS * HD];
        for (int kh = 0; kh < KVD / HD; kh++) {
            c.decodeK(kPage, 8, 40, kh, kh + 1, k);
            c.decodeV(vPage, 8, 40, kh, kh + 1, v);
            for (int j = 8; j < 40; j++) {
                float[] want = rounded(type, rows[j]);
                for (int i = 0; i < HD; i++) {
                    String what = type + " head " + kh + " position " + j + " element " + i;
                    assertThat(k[KvSlot.kBlock(j, HD) + 8 * i + j % 8]).as(what).isEqualTo(want[kh * HD + i]);
                    assertThat(v[j * HD + i]).as(what).isEqualTo(want[kh * HD + i]);
                }
            }
        }
        // All heads at once: head by head, each in the layout of a one-head page.
        float[] kAll = new float[KvLayout.PAGE_TOKENS * KVD], vAll = new float[KvLayout.PAGE_TOKENS * KVD];
        c.decodeK(kPage, 8, 40, 0, KVD / HD, kAll);
        c.decodeV(vPage, 8, 40, 0, KVD / HD, vAll);
        for (int j = 8; j < 40; j++) {
            float[] want = rounded(type, rows[j]);
            for (int kh = 0; kh < KVD / HD; kh++) {
                for (int i = 0; i < HD; i++) {
                    String what = type + " all heads, head " + kh + " position " + j + " element " + i;
                    int h = kh * KvLayout.PAGE_TOKENS * HD;
                    assertThat(kAll[h + KvSlot.kBlock(j, HD) + 8 * i + j % 8]).as(what).isEqualTo(want[kh * HD + i]);
                    assertThat(vAll[h + j * HD + i]).as(what).isEqualTo(want[kh * HD + i]);
                }
            }
        }
        // A decode step's stretch: positions [16, 32) of both heads, 16 positions per head from position 16.
        float[] kS = new float[16 * KVD], vS = new float[16 * KVD];
        c.decodeK(kPage, 16, 32, 0, KVD / HD, kS, 16, 16);
        c.decodeV(vPage, 16, 32, 0, KVD / HD, vS, 16, 16);
        for (int j = 16; j < 32; j++) {
            float[] want = rounded(type, rows[j]);
            for (int kh = 0; kh < KVD / HD; kh++) {
                for (int i = 0; i < HD; i++) {
                    String what = type + " stretch, head " + kh + " position " + j + " element " + i;
                    int h = kh * 16 * HD;
                    assertThat(kS[h + (j - 16) / 8 * 8 * HD + 8 * i + j % 8]).as(what).isEqualTo(want[kh * HD + i]);
                    assertThat(vS[h + (j - 16) * HD + i]).as(what).isEqualTo(want[kh * HD + i]);
                }
            }
        }
    }

    /** The stored row by each type's rule, element by element. */
    private static float[] rounded(KvCacheType type, float[] x) {
        float[] r = new float[x.length];
        for (int b = 0; b < x.length; b += 32) {
            float amax = 0f;
            for (int i = b; i < b + 32; i++) amax = Math.max(amax, Math.abs(x[i]));
            float d = amax / 127f, id = d == 0f ? 0f : 1f / d, dh = Float.float16ToFloat(Float.floatToFloat16(d));
            for (int i = b; i < b + 32; i++) {
                r[i] = switch (type) {
                    case F32 -> x[i];
                    case F16 -> Float.float16ToFloat(Float.floatToFloat16(x[i]));
                    case BF16 -> Float.intBitsToFloat(HalfFloats.bf16(x[i]) << 16);
                    case Q8_0 -> (float) Math.rint(x[i] * id) * dh;
                };
            }
        }
        return r;
    }

    @Test
    void theCacheTypesArePartOfTheLayoutIdAndItsBytesPerToken() {
        KvLayout f32 = new KvLayout(16, 8, 64);
        assertThat(f32.id()).isEqualTo("llama-kv-f32/16x2x8x64");
        assertThat(f32.withTypes(KvCacheTypes.of(KvCacheType.F16)).id()).isEqualTo("llama-kv-f16/16x2x8x64");
        assertThat(f32.withTypes(new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16)).id()).isEqualTo("llama-kv-k-q8_0.v-f16/16x2x8x64");
        // Llama 3.2 1B: 16 layers, 8 kv heads x 64: llama.cpp's 64, 32 and 17 KiB per token.
        assertThat(f32.bytesForTokens(1)).isEqualTo(65536);
        assertThat(f32.withTypes(KvCacheTypes.of(KvCacheType.F16)).bytesForTokens(1)).isEqualTo(32768);
        assertThat(f32.withTypes(KvCacheTypes.of(KvCacheType.BF16)).bytesForTokens(4096)).isEqualTo(32768L * 4096);
        assertThat(f32.withTypes(KvCacheTypes.of(KvCacheType.Q8_0)).bytesForTokens(1)).isEqualTo(17408);
        assertThat(f32.bytesPerTokenByCacheType()).containsExactly(java.util.Map.entry(KvCacheType.F32, 65536L),
                java.util.Map.entry(KvCacheType.F16, 32768L), java.util.Map.entry(KvCacheType.BF16, 32768L),
                java.util.Map.entry(KvCacheType.Q8_0, 17408L));
    }

    @Test
    void q8RefusesRowsThatDoNotSplitIntoBlocksOf32AndLatentAttentionKeepsF32() {
        assertThatThrownBy(() -> new KvLayout(2, 1, 48).withTypes(KvCacheTypes.of(KvCacheType.Q8_0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cache type q8_0 stores blocks of 32 values; this model's K/V rows are 48 values (1 kv heads x 48)");
        assertThatThrownBy(() -> KvLayout.latent(2, 96).withTypes(KvCacheTypes.of(KvCacheType.F16)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--cache-type-k/--cache-type-v f16: latent attention (deepseek2) keeps its K/V cache in f32 only");
        assertThatThrownBy(() -> KvCacheType.ofFlag("--cache-type-k", "q4_0"))
                .hasMessage("--cache-type-k must be one of f32, f16, bf16, q8_0, not 'q4_0' (llama.cpp's q4_0 is not implemented in dgr)");
    }
}
