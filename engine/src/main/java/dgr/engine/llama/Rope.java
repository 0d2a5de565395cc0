package dgr.engine.llama;

/**
 * Precomputed cos/sin for every position and rotating pair, following llama.cpp's rope (with
 * linear scaling, YaRN ramp and Llama-3 frequency factors). Angles are computed in double and
 * rounded once, so the table is the same on every run.
 */
final class Rope {
    private final RopeConfig cfg;
    private final int pairs;
    private final float[] cos;
    private final float[] sin;

    Rope(RopeConfig cfg, int contextLength) {
        this.cfg = cfg;
        this.pairs = cfg.nRot() / 2;
        this.cos = new float[contextLength * pairs];
        this.sin = new float[contextLength * pairs];
        double freqScale = 1.0 / cfg.factor();
        boolean yarn = cfg.scaling().equals("yarn");
        double mscale = cfg.attnFactor();
        double low = 0, high = 0;
        if (yarn) {
            low = Math.max(0, Math.floor(corrDim(cfg.nRot(), cfg.origContext(), 32, cfg.freqBase())));
            high = Math.min(cfg.nRot() - 1, Math.ceil(corrDim(cfg.nRot(), cfg.origContext(), 1, cfg.freqBase())));
            mscale *= 1.0 + 0.1 * Math.log(1.0 / freqScale);
        }
        for (int i = 0; i < pairs; i++) {
            double invFreq = Math.pow(cfg.freqBase(), -2.0 * i / cfg.nRot());
            if (cfg.freqFactors() != null) invFreq /= cfg.freqFactors()[i];
            double ramp = 0;
            if (yarn) {
                double y = (i - low) / Math.max(0.001, high - low);
                ramp = 1 - Math.min(1, Math.max(0, y));
            }
            for (int p = 0; p < contextLength; p++) {
                double extrap = p * invFreq;
                double theta = cfg.scaling().equals("none") ? extrap : freqScale * extrap;
                if (yarn) theta = theta * (1 - ramp) + extrap * ramp;
                cos[p * pairs + i] = (float) (Math.cos(theta) * mscale);
                sin[p * pairs + i] = (float) (Math.sin(theta) * mscale);
            }
        }
    }

    private static double corrDim(int nDims, int nCtxOrig, double nRot, double base) {
        return nDims * Math.log(nCtxOrig / (nRot * 2 * Math.PI)) / (2 * Math.log(base));
    }

    /** Rotates {@code nHeads} heads of width {@code headDim} at {@code v[off..]} for position {@code pos}. */
    void apply(float[] v, int off, int nHeads, int headDim, int pos) {
        int t = pos * pairs;
        int half = cfg.nRot() / 2;
        for (int h = 0; h < nHeads; h++) {
            int base = off + h * headDim;
            for (int i = 0; i < pairs; i++) {
                int a = cfg.neox() ? base + i : base + 2 * i;
                int b = cfg.neox() ? base + i + half : base + 2 * i + 1;
                float c = cos[t + i], s = sin[t + i];
                float x0 = v[a], x1 = v[b];
                v[a] = x0 * c - x1 * s;
                v[b] = x0 * s + x1 * c;
            }
        }
    }
}
