package dgr.engine.fuzz;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded mutations of one valid GGUF file, aimed at its header: a header count, a metadata key's
 * type, length or value (boundary integers, zero, negative, NaN, infinities), a tensor's dimensions,
 * type or offset (another tensor's offset makes an overlap), random byte flips, or a truncation.
 * One to three mutations per case; the same (seed, case) always gives the same bytes.
 */
final class GgufMutator {
    private static final long[] INTS = {0, 1, -1, 2, 3, 7, 255, 256, 1023, 65535, 65536, Integer.MAX_VALUE,
            Integer.MIN_VALUE, 1L << 31, 1L << 32, 1_000_000_000L, 1L << 40, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 62};
    private static final double[] FLOATS = {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
            -1.0, 1e-30, 1e30, 1e-45, 3.4e38, 0.5, 1e6};

    private final byte[] original;
    private final GgufFields fields;

    GgufMutator(byte[] original) {
        this.original = original;
        this.fields = GgufFields.of(original);
    }

    /** The bytes a mutated file spans at most: header fields only are written; a truncation shortens. */
    int headerEnd() { return fields.headerEnd(); }

    /**
     * Writes case {@code rng}'s mutations into {@code buf} (a copy of the original whose header the
     * caller restores afterwards) and returns the mutated length; {@code log} gets what was done.
     */
    int mutate(byte[] buf, SplittableRandom rng, StringBuilder log) {
        int length = buf.length;
        int n = 1 + rng.nextInt(3);
        List<GgufFields.Field> fs = fields.fields();
        for (int m = 0; m < n; m++) {
            int op = rng.nextInt(100);
            if (op < 8) {
                length = rng.nextInt(length);
                log.append("truncate to ").append(length).append("; ");
                continue;
            }
            if (op < 18) {
                int flips = 1 + rng.nextInt(8);
                for (int i = 0; i < flips; i++) {
                    int pos = rng.nextInt(Math.min(length, fields.headerEnd()));
                    buf[pos] ^= (byte) (1 << rng.nextInt(8));
                    log.append("flip byte ").append(pos).append("; ");
                }
                continue;
            }
            GgufFields.Field f = fs.get(rng.nextInt(fs.size()));
            switch (f.kind()) {
                case FLOAT_VALUE -> {
                    double v = rng.nextInt(4) == 0 ? rng.nextDouble() * 1e3 - 500 : FLOATS[rng.nextInt(FLOATS.length)];
                    ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
                    if (f.width() == 4) b.putFloat(f.pos(), (float) v); else b.putDouble(f.pos(), v);
                    log.append(f.owner()).append(" = ").append(v).append("; ");
                }
                case TENSOR_OFFSET -> {
                    long v = switch (rng.nextInt(3)) {
                        case 0 -> read(original, otherOffset(rng, fs).pos(), 8); // overlap another tensor
                        case 1 -> read(original, f.pos(), 8) + 32L * (rng.nextInt(9) - 4);
                        default -> interesting(rng, f);
                    };
                    write(buf, f.pos(), f.width(), v);
                    log.append(f.owner()).append(" offset = ").append(v).append("; ");
                }
                default -> {
                    long v = interesting(rng, f);
                    write(buf, f.pos(), f.width(), v);
                    log.append(f.kind()).append(' ').append(f.owner()).append(" = ").append(v).append("; ");
                }
            }
        }
        return length;
    }

    /** A boundary value, a small change of the original, or a random one. */
    private long interesting(SplittableRandom rng, GgufFields.Field f) {
        long orig = read(original, f.pos(), f.width());
        return switch (rng.nextInt(4)) {
            case 0 -> orig + rng.nextInt(-3, 4);
            case 1 -> rng.nextBoolean() ? orig * 2 : orig / 2;
            case 2 -> rng.nextLong();
            default -> INTS[rng.nextInt(INTS.length)];
        };
    }

    private static GgufFields.Field otherOffset(SplittableRandom rng, List<GgufFields.Field> fs) {
        while (true) {
            GgufFields.Field f = fs.get(rng.nextInt(fs.size()));
            if (f.kind() == GgufFields.Kind.TENSOR_OFFSET) return f;
        }
    }

    static long read(byte[] buf, int pos, int width) {
        long v = 0;
        for (int i = width - 1; i >= 0; i--) v = (v << 8) | (buf[pos + i] & 0xff);
        return width < 8 ? (v << (64 - 8 * width)) >> (64 - 8 * width) : v; // sign-extend
    }

    static void write(byte[] buf, int pos, int width, long v) {
        for (int i = 0; i < width; i++) buf[pos + i] = (byte) (v >>> (8 * i));
    }
}
