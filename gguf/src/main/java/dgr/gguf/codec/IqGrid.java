package dgr.gguf.codec;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * One codebook of the IQ1/IQ2/IQ3 formats: {@code size} entries of {@code dim} values each —
 * unsigned magnitudes (signs are stored beside them) for IQ2 and IQ3, −1/0/+1 for IQ1. The
 * entries are ggml's ({@code iq2xxs_grid} … {@code iq1s_grid} in ggml-common.h, MIT licence):
 * data that defines the formats, read from {@code iq-grids.bin}, which
 * {@code tools/iq-grids/extract.sh} copies out of a built libggml-base.so; {@code IqCodecTest}
 * checks its SHA-256 and decodes ggml's own samples with it bit for bit.
 *
 * <p>For encoding, {@link #nearest} finds the entry closest to a vector of targets: each target is
 * rounded to the nearest value any entry uses, and only the {@value #NEIGHBOURS} entries nearest to
 * that rounded vector are measured (lists built on first use, as ggml's quantizers keep neighbour
 * lists for points off the grid).
 */
final class IqGrid {
    /** Bytes of {@code iq-grids.bin}: the six codebooks back to back, in the order below. */
    static final int FILE_BYTES = 33792;

    private static final byte[] DATA = load();

    static final IqGrid IQ2_XXS = new IqGrid(0, 256, 8, false), IQ2_XS = new IqGrid(2048, 512, 8, false),
            IQ2_S = new IqGrid(6144, 1024, 8, false), IQ3_XXS = new IqGrid(14336, 256, 4, false),
            IQ3_S = new IqGrid(15360, 512, 4, false), IQ1 = new IqGrid(17408, 2048, 8, true);

    private static final int NEIGHBOURS = 8;

    final int size;
    final int dim;
    private final int offset;
    private final boolean signed;
    /** The smallest and largest value of any entry. */
    final int min, max;
    private volatile Search search;

    private IqGrid(int offset, int size, int dim, boolean signed) {
        this.offset = offset;
        this.size = size;
        this.dim = dim;
        this.signed = signed;
        int lo = Integer.MAX_VALUE, hi = Integer.MIN_VALUE;
        for (int i = 0; i < size * dim; i++) {
            lo = Math.min(lo, value(i / dim, i % dim));
            hi = Math.max(hi, value(i / dim, i % dim));
        }
        min = lo;
        max = hi;
    }

    /** Value {@code j} of entry {@code e}. */
    int value(int e, int j) {
        byte b = DATA[offset + e * dim + j];
        return signed ? b : b & 0xFF;
    }

    /**
     * ggml's {@code ksigns_iq2xs}: 7 stored sign bits and, as bit 7, their parity, so that every
     * group of 8 has an even number of negative values (the encoders flip the smallest one when needed).
     */
    static int ksigns(int seven) {
        return seven | (Integer.bitCount(seven) & 1) << 7;
    }

    /**
     * The entry minimising {@code Σ_j (t[o+j]·inv − shift − value(e, j))²}: targets divided by the
     * scale, less the format's constant offset (IQ1's ±1/8, 0 elsewhere).
     */
    int nearest(float[] t, int o, float inv, float shift) {
        Search s = search();
        int code = 0;
        for (int j = dim - 1; j >= 0; j--) code = code * s.levels.length + s.level(t[o + j] * inv - shift);
        int best = 0;
        float bestErr = Float.POSITIVE_INFINITY;
        for (int k = 0; k < NEIGHBOURS; k++) {
            int e = s.neighbours[code * NEIGHBOURS + k];
            float err = 0;
            for (int j = 0; j < dim; j++) {
                float r = t[o + j] * inv - shift - value(e, j);
                err += r * r;
            }
            if (err < bestErr) {
                bestErr = err;
                best = e;
            }
        }
        return best;
    }

    /** The distinct values of all entries, ascending. */
    int[] levels() {
        return search().levels;
    }

    private Search search() {
        Search s = search;
        if (s == null) {
            synchronized (this) {
                if (search == null) search = new Search(this);
                s = search;
            }
        }
        return s;
    }

    /** The distinct values (sorted) and, for each vector of them, its nearest entries. */
    private static final class Search {
        final int[] levels;
        final int[] neighbours;

        Search(IqGrid g) {
            levels = java.util.stream.IntStream.range(0, g.size * g.dim).map(i -> g.value(i / g.dim, i % g.dim)).distinct().sorted().toArray();
            int codes = 1;
            for (int j = 0; j < g.dim; j++) codes *= levels.length;
            neighbours = new int[codes * NEIGHBOURS];
            int[] bestE = new int[NEIGHBOURS];
            long[] bestD = new long[NEIGHBOURS];
            int[] v = new int[g.dim];
            for (int c = 0; c < codes; c++) {
                for (int j = 0, r = c; j < g.dim; j++, r /= levels.length) v[j] = levels[r % levels.length];
                java.util.Arrays.fill(bestD, Long.MAX_VALUE);
                for (int e = 0; e < g.size; e++) {
                    long d = 0;
                    for (int j = 0; j < g.dim; j++) {
                        long r = v[j] - g.value(e, j);
                        d += r * r;
                    }
                    // Insertion into the short sorted list; ties keep the lower entry first.
                    if (d >= bestD[NEIGHBOURS - 1]) continue;
                    int k = NEIGHBOURS - 1;
                    while (k > 0 && bestD[k - 1] > d) {
                        bestD[k] = bestD[k - 1];
                        bestE[k] = bestE[k - 1];
                        k--;
                    }
                    bestD[k] = d;
                    bestE[k] = e;
                }
                System.arraycopy(bestE, 0, neighbours, c * NEIGHBOURS, NEIGHBOURS);
            }
        }

        /** Index of the level nearest to {@code u}. */
        int level(float u) {
            int k = 0;
            while (k + 1 < levels.length && u > 0.5f * (levels[k] + levels[k + 1])) k++;
            return k;
        }
    }

    private static byte[] load() {
        try (InputStream in = IqGrid.class.getResourceAsStream("iq-grids.bin")) {
            if (in == null) throw new IllegalStateException("iq-grids.bin is missing from dgr's gguf module");
            byte[] b = in.readAllBytes();
            if (b.length != FILE_BYTES) {
                throw new IllegalStateException("iq-grids.bin has " + b.length + " bytes, expected " + FILE_BYTES);
            }
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SHA-256 of the codebooks as loaded (tests compare it with the extracted file's). */
    static byte[] dataForTests() {
        return DATA.clone();
    }
}
