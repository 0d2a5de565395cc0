package dgr.engine.llama;

import dgr.engine.kernel.Exp;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The element-wise steps of a block: biases and the FFNs' activations, each computed as
 * llama.cpp's graph computes it (the precision of each step stated beside it), so a value's bits
 * depend on nothing but its own inputs.
 */
final class Elementwise {
    private Elementwise() {}

    /** gpt-oss's SwiGLU limit and sigmoid slope (constants in llama.cpp, not in the file). */
    private static final float OAI_LIMIT = 7f, OAI_ALPHA = 1.702f;
    private static final double SQRT_2_OVER_PI = Math.sqrt(2.0 / Math.PI);

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_256;

    /**
     * hb = silu(gate) · up on output rows [o0, o1) of each of {@code n} batch rows ({@code rows}
     * per batch row), eight lanes at a time with {@link #silu}'s steps; Gemma's gelu(gate) · up,
     * with the tanh form of GELU that llama.cpp's {@code ggml_gelu} computes (in double here; ggml
     * reads it from an f16 table).
     */
    static void swiglu(boolean gelu, float[] gate, float[] up, float[] hb, int n, int rows, int o0, int o1) {
        for (int b = 0; b < n; b++) {
            int o = b * rows + o0, e = b * rows + o1;
            if (!gelu) {
                // e^(−|x|) goes through hb (Exp: arrays in and out, no vector crosses the call), then
                // hb = silu(x)·up over the same lanes.
                int v = o + (e - o) / F.length() * F.length();
                for (int i = o; i < v; i += F.length()) FloatVector.fromArray(F, gate, i).abs().neg().intoArray(hb, i);
                Exp.exp(hb, o, v, 0f);
                for (; o < v; o += F.length()) {
                    FloatVector x = FloatVector.fromArray(F, gate, o), ex = FloatVector.fromArray(F, hb, o);
                    FloatVector num = x.blend(x.mul(ex), x.compare(VectorOperators.LT, 0f));
                    num.div(ex.add(1f)).mul(FloatVector.fromArray(F, up, o)).intoArray(hb, o);
                }
            }
            for (; o < e; o++) hb[o] = (gelu ? gelu(gate[o]) : silu(gate[o])) * up[o];
        }
    }

    /**
     * OpenAI's clamped SwiGLU as ggml's {@code swiglu_oai} computes it, in float:
     * {@code x = min(gate, 7)}, {@code y = clamp(up, −7, 7)}, {@code x / (1 + e^(−1.702·x)) · (y + 1)}.
     */
    static void swigluOai(float[] gate, float[] up, float[] hb, int n, int rows, int o0, int o1) {
        for (int b = 0; b < n; b++) {
            for (int o = b * rows + o0, e = b * rows + o1; o < e; o++) {
                float x = Math.min(gate[o], OAI_LIMIT), y = Math.max(-OAI_LIMIT, Math.min(up[o], OAI_LIMIT));
                float glu = x / (1f + (float) Math.exp(OAI_ALPHA * -x));
                hb[o] = glu * (y + 1f);
            }
        }
    }

    /**
     * SiLU, {@code x·sigmoid(x)}, in float as ggml's {@code ggml_silu_f32}, with dgr's own
     * {@link Exp} of {@code −|x|} (at most 1): {@code x / (1 + e)} for {@code x ≥ 0},
     * {@code (x·e) / (1 + e)} below. Additions, multiplies and divisions only, so the eight-lane
     * form in {@link #swiglu} gives the same bits, on every machine (it was {@code Math.exp} in
     * double, whose last bits the platform decides, and scalar: 4% of a prompt's time).
     */
    static float silu(float x) {
        float e = Exp.exp(-Math.abs(x));
        return (x < 0f ? x * e : x) / (1f + e);
    }

    /** GELU, tanh form ({@code ggml_gelu}), in double, rounded once. */
    static float gelu(float x) {
        double g = x;
        return (float) (0.5 * g * (1.0 + Math.tanh(SQRT_2_OVER_PI * (g + 0.044715 * g * g * g))));
    }

    /** Adds {@code bias[o]} to output rows {@code [o0, o1)} of each of {@code n} batch rows ({@code rows} per batch row). */
    static void addBiasRange(float[] a, int n, int rows, int o0, int o1, float[] bias) {
        for (int b = 0; b < n; b++) {
            for (int o = o0; o < o1; o++) a[b * rows + o] += bias[o];
        }
    }

    /** {@code bias} added to each of the first {@code rows} rows of {@code a} (rows as wide as the bias); nothing where it is null. */
    static void addBiasRows(float[] a, int rows, float[] bias) {
        if (bias != null) for (int r = 0; r < rows; r++) addBias(a, r * bias.length, bias);
    }

    /** {@code bias} added to {@code a} from {@code off}; nothing where it is null. */
    static void addBias(float[] a, int off, float[] bias) {
        if (bias == null) return;
        for (int i = 0; i < bias.length; i++) a[off + i] += bias[i];
    }
}
