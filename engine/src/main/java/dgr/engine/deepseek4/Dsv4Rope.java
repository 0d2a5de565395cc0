package dgr.engine.deepseek4;

/**
 * GGML "normal" rope (adjacent pairs) on the last {@code nRot} dims of a vector, with optional YaRN
 * (DSV4-SPEC 2.4). Angles are computed in double and tabulated per position; cos and sin are not
 * scaled (V4 passes an attention factor that cancels YaRN's magnitude term).
 */
final class Dsv4Rope {
    private final int half;
    private final float[] cos;
    private final float[] sin;
    final String describe;

    Dsv4Rope(int nRot, double base, boolean yarn, double freqScale, int nCtxOrig, int positions) {
        this.half = nRot / 2;
        this.cos = new float[positions * half];
        this.sin = new float[positions * half];
        double low = 0, high = 0;
        if (yarn) {
            low = Math.max(0, Math.floor(corr(32, nRot, nCtxOrig, base)));
            high = Math.min(nRot - 1, Math.ceil(corr(1, nRot, nCtxOrig, base)));
        }
        for (int p = 0; p < positions; p++) {
            for (int j = 0; j < half; j++) {
                double ext = p * Math.pow(base, -2.0 * j / nRot);
                double th = ext;
                if (yarn) {
                    double ramp = 1 - Math.min(1, Math.max(0, (j - low) / Math.max(0.001, high - low)));
                    th = freqScale * ext * (1 - ramp) + ext * ramp;
                }
                cos[p * half + j] = (float) Math.cos(th);
                sin[p * half + j] = (float) Math.sin(th);
            }
        }
        describe = "normal/rot=" + nRot + "/base=" + base + (yarn ? "/yarn(scale=" + freqScale + ",orig=" + nCtxOrig + ",beta=32/1)" : "");
    }

    private static double corr(double beta, int nRot, int nCtxOrig, double base) {
        return nRot * Math.log(nCtxOrig / (beta * 2 * Math.PI)) / (2 * Math.log(base));
    }

    /** Rotates the last nRot dims of x[off..off+width) for position p (by −θ when inverse). */
    void apply(float[] x, int off, int width, int p, boolean inverse) {
        int base = off + width - 2 * half;
        int t = p * half;
        for (int j = 0; j < half; j++) {
            float c = cos[t + j], s = inverse ? -sin[t + j] : sin[t + j];
            float x0 = x[base + 2 * j], x1 = x[base + 2 * j + 1];
            x[base + 2 * j] = x0 * c - x1 * s;
            x[base + 2 * j + 1] = x0 * s + x1 * c;
        }
    }
}
