package dgr.engine.llama;

/**
 * The model's norms over one row (or one head of it), each summed left to right in double and
 * rounded to float after each step, so a row's result is the same sequence whatever the batch.
 */
final class Norms {
    private final float eps;
    /** The variant's block norm is a LayerNorm (StableLM, StarCoder2, Phi-2, Command R), not an RMSNorm. */
    private final boolean layerNormBlocks;

    Norms(LlamaConfig cfg) {
        this.eps = cfg.rmsEps();
        this.layerNormBlocks = cfg.variant().layerNorm != null;
    }

    /**
     * The variant's block norm: LayerNorm with its bias (StableLM, StarCoder2, Phi-2), else RMSNorm,
     * then its bias where there is one (Phi-3.5-MoE; ggml's mul then add).
     */
    void block(float[] in, int io, float[] weight, float[] bias, float[] out, int oo) {
        if (layerNormBlocks) {
            layer(in, io, weight, 0, weight.length, bias, out, oo);
        } else {
            rms(in, io, weight, out, oo);
            if (bias != null) for (int i = 0; i < bias.length; i++) out[oo + i] += bias[i];
        }
    }

    /** Q's and K's heads normalised by LayerNorm with each head's own weights (StableLM 2 12B, Command R+), not RMSNorm. */
    boolean layerNormHeads() {
        return layerNormBlocks;
    }

    /**
     * LayerNorm of {@code in[io .. io+e)} with {@code weight[wo .. wo+e)} (and {@code bias[0 .. e)} where given):
     * out = (x − mean) / sqrt(var + eps) · weight (+ bias), as ggml's {@code norm} then mul and add:
     * the mean and the variance summed left to right in double, each step after rounded to float.
     */
    void layer(float[] in, int io, float[] weight, int wo, int e, float[] bias, float[] out, int oo) {
        double sum = 0;
        for (int i = 0; i < e; i++) sum += in[io + i];
        float mean = (float) (sum / e);
        double ss = 0;
        for (int i = 0; i < e; i++) {
            float d = in[io + i] - mean;
            ss += (double) d * d;
        }
        float scale = (float) (1.0 / Math.sqrt(ss / e + eps));
        if (bias == null) {
            for (int i = 0; i < e; i++) out[oo + i] = (in[io + i] - mean) * scale * weight[wo + i];
        } else {
            for (int i = 0; i < e; i++) out[oo + i] = (in[io + i] - mean) * scale * weight[wo + i] + bias[i];
        }
    }

    /** out = x / sqrt(mean(x²) + eps) · weight, summing squares left to right in double. */
    void rms(float[] in, int io, float[] weight, float[] out, int oo) {
        int e = weight.length;
        double ss = 0;
        for (int i = 0; i < e; i++) ss += (double) in[io + i] * in[io + i];
        float scale = (float) (1.0 / Math.sqrt(ss / e + eps));
        for (int i = 0; i < e; i++) out[oo + i] = in[io + i] * scale * weight[i];
    }

    /** x / sqrt(mean(x²) + eps) in place over {@code a[o .. o+e)}: ggml's {@code rms_norm} with no weight after it. */
    void rmsUnweighted(float[] a, int o, int e) {
        double ss = 0;
        for (int i = 0; i < e; i++) ss += (double) a[o + i] * a[o + i];
        float scale = (float) (1.0 / Math.sqrt(ss / e + eps));
        for (int i = 0; i < e; i++) a[o + i] = a[o + i] * scale;
    }
}
