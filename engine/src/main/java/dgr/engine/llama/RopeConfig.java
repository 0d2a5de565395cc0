package dgr.engine.llama;

import dgr.engine.kernel.RowDecoder;
import dgr.gguf.GgmlType;
import dgr.gguf.GgufArtifact;
import dgr.gguf.Metadata;
import dgr.gguf.TensorInfo;
import java.util.Arrays;
import java.util.Locale;

/**
 * Rotary position embedding settings, as llama.cpp applies them.
 *
 * @param neox         false: llama's "normal" pairing (2i, 2i+1); true: NeoX pairing (i, i + nRot/2)
 * @param nRot         leading dimensions of each head that rotate
 * @param freqBase     theta base
 * @param scaling      {@code none}, {@code linear} or {@code yarn}
 * @param factor       context scaling factor (freq_scale = 1 / factor)
 * @param origContext  YaRN's original context length
 * @param attnFactor   YaRN magnitude factor
 * @param freqFactors  per-pair divisors of the frequency (Llama-3 {@code rope_freqs.weight}), or null
 */
public record RopeConfig(boolean neox, int nRot, double freqBase, String scaling, double factor, int origContext,
                         double attnFactor, float[] freqFactors, float[] longFreqFactors) {

    /**
     * The configuration for a context of {@code contextLength}: Phi-3's long frequency factors
     * ({@code rope_factors_long}) when the context exceeds the original one, as llama.cpp picks
     * them, else its short ones; unchanged for other models. Chosen once per engine, so a session's
     * rotation never depends on what it is batched with.
     */
    public RopeConfig forContext(int contextLength) {
        if (longFreqFactors == null || contextLength <= origContext) return this;
        return new RopeConfig(neox, nRot, freqBase, scaling, factor, origContext, attnFactor, longFreqFactors, null);
    }

    /** The file's rotation under prefix {@code p}, with pairs as the architecture's {@link LlamaVariant} sets them. */
    static RopeConfig from(GgufArtifact a, String p, int headDim, boolean neox) {
        Metadata md = a.metadata();
        int nRot = md.getInt(p + "rope.dimension_count", headDim);
        double base = md.has(p + "rope.freq_base") ? md.getDouble(p + "rope.freq_base") : 10000.0;
        String scaling = md.getString(p + "rope.scaling.type", "none").toLowerCase(Locale.ROOT);
        double factor = md.has(p + "rope.scaling.factor") ? md.getDouble(p + "rope.scaling.factor") : 1.0;
        if (md.has(p + "rope.scale_linear")) {
            scaling = "linear";
            factor = md.getDouble(p + "rope.scale_linear");
        }
        if (!scaling.equals("none") && !scaling.equals("linear") && !scaling.equals("yarn")) {
            throw new IllegalArgumentException(a.path() + ": rope scaling '" + scaling + "' is not supported (none, linear, yarn)");
        }
        if (factor == 0.0) factor = 1.0;
        int orig = md.getInt(p + "rope.scaling.original_context_length", md.getInt(p + "context_length", 2048));
        double attn = md.has(p + "rope.scaling.attn_factor") ? md.getDouble(p + "rope.scaling.attn_factor") : 1.0;
        // Llama 3.1's rope_freqs, or Phi-3's short factors (its long ones are chosen by forContext).
        float[] ff = factors(a, "rope_freqs.weight", nRot);
        if (ff == null) ff = factors(a, "rope_factors_short.weight", nRot);
        float[] longFf = factors(a, "rope_factors_long.weight", nRot);
        return new RopeConfig(neox, nRot, base, scaling, factor, orig, attn, ff, longFf);
    }

    /** An F32 tensor of {@code nRot / 2} per-pair frequency divisors, or null when the file has none. */
    private static float[] factors(GgufArtifact a, String name, int nRot) {
        TensorInfo t = a.tensorOrNull(name);
        if (t == null) return null;
        if (t.type() != GgmlType.F32 || t.elementCount() != nRot / 2) {
            throw new IllegalArgumentException(a.path() + ": " + name + " must be F32 with " + nRot / 2 + " values, found " + t);
        }
        float[] ff = new float[nRot / 2];
        RowDecoder.decode(GgmlType.F32, t.data(), 0, ff, 0, ff.length);
        return ff;
    }

    /** The same pairing and width at another base, without scaling or frequency factors (Gemma 3's local layers). */
    public RopeConfig unscaled(double base) {
        return new RopeConfig(neox, nRot, base, "none", 1.0, origContext, 1.0, null, null);
    }

    public RopeConfig withNeox(boolean n) {
        return new RopeConfig(n, nRot, freqBase, scaling, factor, origContext, attnFactor, freqFactors, longFreqFactors);
    }

    /** Canonical text for the recipe: every setting that changes the numbers. */
    public String canonical() {
        return (neox ? "neox" : "normal") + ";n_rot=" + nRot + ";base=" + freqBase + ";scaling=" + scaling
                + ";factor=" + factor + ";orig_ctx=" + origContext + ";attn_factor=" + attnFactor
                + ";freq_factors=" + (freqFactors == null ? "none" : Integer.toHexString(Arrays.hashCode(freqFactors)));
    }
}
