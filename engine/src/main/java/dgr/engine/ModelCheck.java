package dgr.engine;

import dgr.gguf.GgufArtifact;
import dgr.gguf.GgufFormatException;
import dgr.gguf.MetaValue;
import dgr.gguf.Metadata;
import dgr.gguf.TensorInfo;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * An architecture's hyper-parameters checked against each other and against the tensor table,
 * before an engine allocates anything from them. A corrupt {@code block_count} of 2^31−1 would
 * otherwise size arrays (OutOfMemoryError), a {@code head_count_kv} of 0 divide by zero, an odd or
 * oversized rope dimension index past a head. Each {@link Problem} names the key or tensor and the
 * rule it breaks; {@link Engines#load} refuses a file with any, {@code dgr inspect} lists them as
 * warnings. Only rules every supported architecture obeys live here (the keys under
 * {@code general.architecture}'s prefix that llama.cpp's loader reads the same way for all of them);
 * an architecture's own keys are checked where it reads them.
 */
public final class ModelCheck {
    /** Largest head count or head width taken at face value; real models stay far below (128 heads, 256 wide). */
    static final long MAX_HEADS = 1 << 16;

    private ModelCheck() {}

    /** One broken rule: {@code subject} is the metadata key or tensor name. */
    public record Problem(String subject, String rule) {
        @Override
        public String toString() { return subject + ": " + rule; }
    }

    /** Throws a {@link GgufFormatException} listing every problem, when there is any. */
    public static void require(GgufArtifact a) {
        List<Problem> problems = problems(a);
        if (problems.isEmpty()) return;
        StringBuilder sb = new StringBuilder(a.path() + ": refused before loading: ");
        for (int i = 0; i < problems.size(); i++) sb.append(i == 0 ? "" : "; ").append(problems.get(i));
        throw new GgufFormatException(sb.toString());
    }

    /** Every broken rule, in the order a reader meets the keys; empty when the file is consistent. */
    public static List<Problem> problems(GgufArtifact a) {
        Metadata md = a.metadata();
        List<Problem> out = new ArrayList<>();
        if (!md.has("general.architecture")) {
            out.add(new Problem("general.architecture", "is missing"));
            return out;
        }
        String arch;
        try {
            arch = md.getString("general.architecture");
        } catch (GgufFormatException e) {
            out.add(new Problem("general.architecture", "must be a string"));
            return out;
        }
        new Rules(a, md, arch + ".", out).run();
        return out;
    }

    /** The checks of one file, collecting problems rather than stopping at the first. */
    private record Rules(GgufArtifact a, Metadata md, String p, List<Problem> out) {
        void run() {
            Long layers = positive("block_count", true);
            if (layers != null) layers(layers);
            Long embd = positive("embedding_length", true);
            if (embd != null) embedding(embd);
            Long heads = positive("attention.head_count", false);
            Long kvHeads = positive("attention.head_count_kv", false);
            if (heads != null && heads > MAX_HEADS) problem("attention.head_count", "= " + heads + " is more than " + MAX_HEADS + " heads");
            if (heads != null && kvHeads != null && heads % kvHeads != 0) {
                problem("attention.head_count_kv", "= " + kvHeads + " does not divide " + p + "attention.head_count = " + heads);
            }
            Long keyLength = positive("attention.key_length", false);
            positive("attention.value_length", false);
            if (keyLength != null && keyLength > MAX_HEADS) problem("attention.key_length", "= " + keyLength + " is wider than " + MAX_HEADS);
            Long headSize = keyLength != null ? keyLength
                    : heads != null && embd != null && heads <= embd ? Long.valueOf(embd / heads) : null;
            rope(headSize);
            positive("context_length", false);
            positiveFinite("attention.layer_norm_rms_epsilon");
            positiveFinite("attention.layer_norm_epsilon");
            positiveFinite("rope.freq_base");
            positiveFinite("attention.compress_rope_freq_base");
            positiveFinite("rope.scaling.factor", true);
        }

        /** block_count against the {@code blk.N.} tensors: every layer present, none beyond. */
        void layers(long blockCount) {
            BitSet seen = new BitSet();
            long beyond = -1;
            for (TensorInfo t : a.tensors()) {
                long n = blockIndex(t.name());
                if (n < 0) continue;
                if (n >= blockCount) beyond = Math.max(beyond, n);
                else seen.set((int) n);
            }
            if (beyond >= 0) {
                problem("block_count", "= " + blockCount + " but the file has tensors of layer blk." + beyond
                        + " (layers are numbered from 0 to block_count - 1)");
            }
            int missing = seen.nextClearBit(0);
            if (missing < blockCount) {
                problem("block_count", "= " + blockCount + " but the file has no tensors of layer blk." + missing
                        + " (" + seen.cardinality() + " layers have tensors)");
            }
        }

        /** The embedding width is the rows' width of the token table and of every norm over the residual. */
        void embedding(long embd) {
            widthIs("token_embd.weight", embd);
            widthIs("output_norm.weight", embd);
            widthIs("output.weight", embd);
            for (TensorInfo t : a.tensors()) {
                if (t.name().startsWith("blk.") && t.name().endsWith(".attn_norm.weight")) widthIs(t.name(), embd);
            }
        }

        void widthIs(String tensor, long embd) {
            TensorInfo t = a.tensorOrNull(tensor);
            if (t != null && t.shape()[0] != embd) {
                problem(tensor, "has rows of " + t.shape()[0] + " values but " + p + "embedding_length is " + embd, false);
            }
        }

        /** rope.dimension_count: even (rotation pairs values) and within one head. */
        void rope(Long headSize) {
            Long rot = positive("rope.dimension_count", false);
            if (rot == null) return;
            if (rot % 2 != 0) problem("rope.dimension_count", "= " + rot + " is odd; rotation turns pairs of values");
            if (headSize != null && rot > headSize) {
                problem("rope.dimension_count", "= " + rot + " is more than the head size " + headSize);
            }
        }

        /** Each value of the key (a scalar, or a per-layer array) is an integer in 1..2^31−1; the largest, or null. */
        Long positive(String key, boolean required) {
            String k = p + key;
            if (!md.has(k)) {
                if (required) problem(key, "is missing");
                return null;
            }
            Long max = null;
            for (Object v : values(k)) {
                if (!(v instanceof Number n) || v instanceof Float || v instanceof Double) {
                    problem(key, "must be an integer, not " + md.get(k).orElseThrow().type());
                    return null;
                }
                long x = n.longValue();
                if (x <= 0 || x > Integer.MAX_VALUE) {
                    problem(key, "= " + x + " must be between 1 and " + Integer.MAX_VALUE);
                    return null;
                }
                max = max == null ? x : Math.max(max, x);
            }
            return max;
        }

        void positiveFinite(String key) { positiveFinite(key, false); }

        /** Each value is a finite number above 0 (or exactly 0 where {@code zeroMeansUnset}: llama.cpp's "not given"). */
        void positiveFinite(String key, boolean zeroMeansUnset) {
            String k = p + key;
            if (!md.has(k)) return;
            for (Object v : values(k)) {
                if (!(v instanceof Number n)) {
                    problem(key, "must be a number, not " + md.get(k).orElseThrow().type());
                    return;
                }
                double x = n.doubleValue();
                if (zeroMeansUnset && x == 0) continue;
                if (!Double.isFinite(x) || !(x > 0)) {
                    problem(key, "= " + x + " must be a finite number above 0");
                    return;
                }
            }
        }

        List<?> values(String key) {
            Object v = md.get(key).orElseThrow().value();
            return v instanceof MetaValue.MetaArray arr ? arr.elements() : List.of(v);
        }

        void problem(String key, String rule) { problem(key, rule, true); }

        void problem(String subject, String rule, boolean isKey) {
            out.add(new Problem(isKey ? p + subject : subject, rule));
        }
    }

    /** N of a {@code blk.N.} tensor name ({@code Long.MAX_VALUE} when N has more digits than a layer can), or -1. */
    static long blockIndex(String name) {
        if (!name.startsWith("blk.")) return -1;
        int dot = name.indexOf('.', 4);
        if (dot <= 4) return -1;
        for (int i = 4; i < dot; i++) if (name.charAt(i) < '0' || name.charAt(i) > '9') return -1;
        return dot - 4 > 18 ? Long.MAX_VALUE : Long.parseLong(name, 4, dot, 10);
    }
}
