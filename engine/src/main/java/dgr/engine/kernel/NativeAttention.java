package dgr.engine.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.List;

/**
 * Attention kernels in x86-64 machine code, two kinds, each element's float operations in the order of
 * the Java kernel it stands in for, so the bits are the same:
 * <ul>
 * <li><b>A decode step over an f16 or bf16 K/V page</b> ({@link #scores}, {@link #weighted}): F16C's
 * {@code vcvtph2ps} widens 16 cache values per instruction on AVX-512, 8 on AVX2, inside the FMA loops,
 * where the Java path widens each stretch into an L1 buffer first and reads it back (the Vector API has
 * no half-float conversion). The scores of whole K blocks of 8 positions and the weighted sum of V rows,
 * as {@link SimdAttention}'s kernels take them on widened floats (widening is exact). Each call also
 * prefetches the region the step reads next (the tile's V while its K is scored, the next tile's K while
 * V is summed), spread over its loop: {@link ArrayPrefetch} did that in calls of 128 lines that waited
 * for fill buffers.
 * <li><b>A prompt's runs of 16 rows in vector lanes</b> ({@link #laneScores}, {@link #laneSoftmax},
 * {@link #laneWeighted}; both images, so where an image runs, so do these): {@link RowLanes#scores},
 * {@link RowLanes#softmax} and {@link RowLanes#weightedVT} on float K and V, the same blocks of four
 * query heads × four positions or elements (AVX2: × two, for each half of the 16 rows), {@link Exp}'s
 * steps. C2's code for those loops ran at 55–60 GFLOP/s a core where this one runs at 96–104 (one thread,
 * 4 heads × 64 × 64, 2026-12-03); without 512-bit vectors C2 has no fast form of them at all (the Vector
 * API emulates 16 lanes), so on AVX2 this is the only rows-in-lanes path.
 * </ul>
 * Arrays go in place as heap segments made once (a page's with the page, {@link HeapSegments} for the
 * rest): one made per call is not removed. {@code NativeAttentionTest} checks every operation of every
 * image the CPU runs against its chains.
 *
 * <p>The images {@code attn-avx512.bin} and {@code attn-avx2.bin} are built from
 * {@code tools/native-kernels/attn.c} by {@code build.sh} (SHA-256 checked; {@code NativeImagesFromSourceTest}
 * rebuilds them). The first needs AVX-512 F/BW/VL/DQ, F16C and FMA as {@code /proc/cpuinfo} lists them, the
 * second AVX2, F16C and FMA; both Linux on x86-64 and native access. {@code -Ddgr.native.attention=avx2}
 * picks the AVX2 image, {@code -Ddgr.native.attention=false} (or {@code -Ddgr.native=false}) the Java paths.
 */
public final class NativeAttention {
    /** The two images, best first, with the CPU flags each needs. */
    enum Variant {
        AVX512("attn-avx512.bin", "9579ecb8b332c274e46ae693e4f087fc5f0c1b9376c1cbf20915d8acfdf1d27d",
                List.of("avx512f", "avx512bw", "avx512vl", "avx512dq", "f16c", "fma", "avx2")),
        AVX2("attn-avx2.bin", "81a85613e7af8af287102fe4ed685c9a8906c3c7fa38a15615821fa58bced54d", List.of("avx2", "fma", "f16c"));

        final String resource, sha256;
        final List<String> flags;

        Variant(String resource, String sha256, List<String> flags) {
            this.resource = resource;
            this.sha256 = sha256;
            this.flags = flags;
        }
    }

    /** The kernel, or null where it cannot run here ({@link #DESCRIPTION} says why). */
    public static final NativeAttention KERNEL;
    /** One line for benchmark reports. */
    static final String DESCRIPTION;

    static {
        // -Ddgr.native=false turns every native kernel off, this one included.
        boolean all = Boolean.parseBoolean(System.getProperty("dgr.native", "true"));
        var chosen = CodePage.choose(all ? "dgr.native.attention" : "dgr.native", all ? System.getProperty("dgr.native.attention", "true") : "false",
                Variant.values(), v -> v.flags, NativeAttention::load);
        NativeAttention k = chosen.kernel();
        String why = chosen.why();
        KERNEL = k;
        DESCRIPTION = k != null
                ? "native attention " + k.variant.name().toLowerCase(java.util.Locale.ROOT) + " (f16/bf16 K/V caches' decode steps; prompt runs, rows in lanes)"
                : "native attention off (" + why + "; Java kernels, same results)";
    }

    /** The variants this CPU has the flags for, best first. */
    static List<Variant> runnable() throws java.io.IOException {
        var flags = CodePage.cpuFlags();
        return java.util.Arrays.stream(Variant.values()).filter(v -> flags.containsAll(v.flags)).toList();
    }

    final Variant variant;
    private final MethodHandle handle;

    private NativeAttention(Variant variant, MethodHandle handle) {
        this.variant = variant;
        this.handle = handle;
    }

    /** {@code v}'s image (its hash checked) in a code page, checked on tiny data; the caller checks the CPU has its flags. */
    static NativeAttention load(Variant v) throws Throwable {
        ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
        ValueLayout a = ValueLayout.ADDRESS;
        // dgr_attn(op, kvSeg, kvOff, xSeg, xOff, ySeg, yOff, pfSeg, pfOff, pfLines, nh, heads, hd, count, hs, tile, aux)
        NativeAttention k = new NativeAttention(v, Linker.nativeLinker().downcallHandle(CodePage.loadImage(v.resource, v.sha256),
                FunctionDescriptor.ofVoid(j, a, j, a, j, a, j, a, j, j, j, j, j, j, j, j, a), Linker.Option.critical(true)));
        k.selfCheck();
        return k;
    }

    /** One call on tiny data at load, so a kernel that cannot run here fails now, not in a decode step. */
    private void selfCheck() {
        short[] page = new short[64 * 16];
        Arrays.fill(page, Float.floatToFloat16(0.5f));
        float[] q = new float[16], sc = new float[64];
        Arrays.fill(q, 1f);
        scores(new Shape(1, 16, 64, 64), false, MemorySegment.ofArray(page), 0, MemorySegment.ofArray(q), 0, MemorySegment.ofArray(sc), 0, 1, 1,
                null, 0, 0);
        if (sc[0] != 8f || sc[7] != 8f || sc[8] != 0f) throw new IllegalStateException("self-check gave " + sc[0] + ", " + sc[7] + ", " + sc[8]);
    }

    /**
     * What stays the same across a layer's calls: {@code heads} query heads per K/V head of {@code hd}
     * values, a page of {@code tile} positions per head, the scores of successive K/V heads {@code hs}
     * floats apart (each K/V head's query heads {@code tile} apart).
     */
    public record Shape(int heads, int hd, int tile, int hs) {}

    /**
     * Scores of {@code blocks} K blocks of 8 positions for {@code nh} K/V heads of one page ({@code s} its shape):
     * K/V head {@code h}'s first block at {@code page[kOff + h·tile·hd ..]} (element {@code i} of
     * position {@code r} of a block at {@code + 8i + r}), its {@code heads} queries at
     * {@code q[qOff + h·heads·hd ..]}, query head {@code g}'s scores at {@code sc[scOff + h·hs + g·tile ..]}.
     * {@code pf}, when not null: {@code pfLines} cache lines of each head's run from {@code pf[pfOff ..]},
     * {@code tile·hd} elements apart, prefetched on the way.
     */
    public void scores(Shape s, boolean bf16, MemorySegment page, int kOff, MemorySegment q, int qOff, MemorySegment sc, int scOff, int nh,
                       int blocks, MemorySegment pf, int pfOff, int pfLines) {
        call(bf16 ? 1 : 0, s, page, kOff, q, qOff, sc, scOff, nh, blocks, pf, pfOff, pfLines);
    }

    /**
     * Adds {@code n} V rows of {@code nh} K/V heads into the outputs: K/V head {@code h}'s first row at
     * {@code page[vOff + h·tile·hd ..]}, query head {@code g}'s weights at {@code w[wOff + h·hs + g·tile ..]},
     * its {@code hd} outputs at {@code out[outOff + (h·heads + g)·hd ..]} ({@code hd} a multiple of 16).
     * {@code pf} as in {@link #scores}.
     */
    public void weighted(Shape s, boolean bf16, MemorySegment page, int vOff, MemorySegment w, int wOff, MemorySegment out, int outOff,
                         int nh, int n, MemorySegment pf, int pfOff, int pfLines) {
        call(bf16 ? 3 : 2, s, page, vOff, w, wOff, out, outOff, nh, n, pf, pfOff, pfLines);
    }

    /**
     * {@link RowLanes#scores}'s results in place: transposed queries at {@code qT[qo ..]}, a K page's
     * floats at {@code k[kBase ..]} with blocks {@code blockStride} apart, positions {@code [p0, p1)}
     * (multiples of 8), scores into {@code sT} from {@code sb}.
     */
    public void laneScores(MemorySegment qT, int qo, int heads, int hd, MemorySegment k, int kBase, int blockStride, int p0, int p1,
                           float scale, MemorySegment sT, int sb, int tile) {
        try {
            handle.invokeExact(4L, k, (long) kBase, qT, (long) qo, sT, (long) sb, MemorySegment.NULL, (long) Float.floatToRawIntBits(scale), 0L,
                    (long) blockStride, (long) heads, (long) hd, (long) p0, (long) p1, (long) tile, MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IllegalStateException("native attention call failed", t);
        }
    }

    /**
     * {@link RowLanes#softmax} for {@code heads} query heads in place: head {@code g}'s scores at
     * {@code sT[sb + g·tile·16 ..]}, its running maximum and sum at {@code state[so + 32g ..]}, its rescale
     * factors into {@code alpha[16g ..]}; the lanes' ranges {@code lo}, {@code hi} where {@code masked}.
     */
    public void laneSoftmax(MemorySegment sT, int sb, int heads, int tile, int p0, int p1, boolean masked, MemorySegment lo, MemorySegment hi,
                            MemorySegment state, int so, MemorySegment alpha) {
        try {
            handle.invokeExact(6L, lo, 0L, sT, (long) sb, state, (long) so, alpha, 0L, 0L, masked ? 1L : 0L, (long) heads, 0L, (long) p0, (long) p1,
                    (long) tile, hi);
        } catch (Throwable t) {
            throw new IllegalStateException("native attention call failed", t);
        }
    }

    /**
     * {@link RowLanes#weightedVT}'s results in place: weights {@code sT} from {@code sb}, V floats from {@code v[vBase ..]}
     * ({@code vStride} apart), transposed outputs at {@code outT[ob ..]} rescaled by {@code alpha} first.
     */
    public void laneWeighted(MemorySegment sT, int sb, int tile, int heads, int p0, int p1, MemorySegment v, int vBase, int vStride,
                             MemorySegment outT, int ob, int hd, MemorySegment alpha) {
        try {
            handle.invokeExact(5L, v, (long) vBase, sT, (long) sb, outT, (long) ob, alpha, 0L, 0L, (long) vStride, (long) heads, (long) hd,
                    (long) p0, (long) p1, (long) tile, MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IllegalStateException("native attention call failed", t);
        }
    }

    private void call(long op, Shape s, MemorySegment page, int kvOff, MemorySegment x, int xOff, MemorySegment y, int yOff, int nh,
                      int count, MemorySegment pf, int pfOff, int pfLines) {
        if (nh <= 0 || count <= 0) return;
        MemorySegment ahead = pf == null ? MemorySegment.NULL : pf;  // a local: invokeExact types a conditional as Object
        try {
            handle.invokeExact(op, page, (long) kvOff, x, (long) xOff, y, (long) yOff, ahead, (long) pfOff,
                    pf == null ? 0L : (long) pfLines, (long) nh, (long) s.heads(), (long) s.hd(), (long) count, (long) s.hs(), (long) s.tile(),
                    MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IllegalStateException("native attention call failed", t);
        }
    }
}
