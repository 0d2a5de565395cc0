package dgr.gguf.codec;

/**
 * llama.cpp's scale searches for the K-quants (ggml-quants.c: make_qkx2_quants, make_qx_quants,
 * make_q3_quants), with the same float operations in the same order, so a block quantizes to
 * what llama-quantize would write. Each works on one sub-block of {@code n} values.
 */
final class KQuantFit {
    /** Below this magnitude a group counts as all zero (GROUP_MAX_EPS). */
    static final float GROUP_MAX_EPS = 1e-15f;

    private KQuantFit() {}

    /**
     * Asymmetric fit x ≈ scale·L − min with L in [0, nmax], weighted; tries {@code nstep + 1}
     * rescalings around nmax/(max − min) and keeps the one with the smallest weighted error
     * (absolute when {@code useMad}, squared otherwise). Returns the scale; {@code minOut[0]}
     * receives the (non-negative) min that is subtracted.
     */
    static float makeQkx2Quants(int n, int nmax, float[] x, int xOff, float[] weights, byte[] L, int lOff,
                                float[] minOut, byte[] laux, float rmin, float rdelta, int nstep, boolean useMad) {
        float min = x[xOff];
        float max = x[xOff];
        float sumW = weights[0];
        float sumX = sumW * x[xOff];
        for (int i = 1; i < n; ++i) {
            float xi = x[xOff + i];
            if (xi < min) min = xi;
            if (xi > max) max = xi;
            float w = weights[i];
            sumW += w;
            sumX += w * xi;
        }
        if (min > 0) min = 0;
        if (max == min) {
            for (int i = 0; i < n; ++i) L[lOff + i] = 0;
            minOut[0] = -min;
            return 0.f;
        }
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestError = 0;
        for (int i = 0; i < n; ++i) {
            int l = CRound.nearestInt(iscale * (x[xOff + i] - min));
            l = Math.max(0, Math.min(nmax, l));
            L[lOff + i] = (byte) l;
            float diff = scale * l + min - x[xOff + i];
            diff = useMad ? Math.abs(diff) : diff * diff;
            bestError += weights[i] * diff;
        }
        if (nstep < 1) {
            minOut[0] = -min;
            return scale;
        }
        for (int is = 0; is <= nstep; ++is) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0, sumL2 = 0, sumXL = 0;
            for (int i = 0; i < n; ++i) {
                int l = CRound.nearestInt(iscale * (x[xOff + i] - min));
                l = Math.max(0, Math.min(nmax, l));
                laux[i] = (byte) l;
                float w = weights[i];
                sumL += w * l;
                sumL2 += w * l * l;
                sumXL += w * l * x[xOff + i];
            }
            float D = sumW * sumL2 - sumL * sumL;
            if (D > 0) {
                float thisScale = (sumW * sumXL - sumX * sumL) / D;
                float thisMin = (sumL2 * sumX - sumL * sumXL) / D;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXL / sumL2;
                }
                float curError = 0;
                for (int i = 0; i < n; ++i) {
                    float diff = thisScale * laux[i] + thisMin - x[xOff + i];
                    diff = useMad ? Math.abs(diff) : diff * diff;
                    curError += weights[i] * diff;
                }
                if (curError < bestError) {
                    System.arraycopy(laux, 0, L, lOff, n);
                    bestError = curError;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        minOut[0] = -min;
        return scale;
    }

    /**
     * Symmetric fit x ≈ scale·(L − nmax) with L − nmax in [−nmax, nmax − 1], where the value of
     * largest magnitude maps to −nmax; with {@code rmseType} 1 the scale is refined by least
     * squares weighted by x² over 18 nearby rescalings. L receives values offset by +nmax.
     */
    static float makeQxQuants(int n, int nmax, float[] x, int xOff, byte[] L, int lOff, int rmseType) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xOff + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xOff + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; ++i) L[lOff + i] = 0;
            return 0.f;
        }
        float iscale = -nmax / max;
        if (rmseType == 0) {
            for (int i = 0; i < n; ++i) {
                int l = CRound.nearestInt(iscale * x[xOff + i]);
                L[lOff + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
            }
            return 1 / iscale;
        }
        boolean returnEarly = false;
        if (rmseType < 0) {
            rmseType = -rmseType;
            returnEarly = true;
        }
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; ++i) {
            float xi = x[xOff + i];
            int l = CRound.nearestInt(iscale * xi);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lOff + i] = (byte) (l + nmax);
            float w = weight(rmseType, xi);
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
        if (returnEarly) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
        float best = scale * sumlx;
        for (int is = -9; is <= 9; ++is) {
            if (is == 0) continue;
            iscale = -(nmax + 0.1f * is) / max;
            sumlx = suml2 = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xOff + i];
                int l = CRound.nearestInt(iscale * xi);
                l = Math.max(-nmax, Math.min(nmax - 1, l));
                float w = weight(rmseType, xi);
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            if (suml2 > 0 && sumlx * sumlx > best * suml2) {
                for (int i = 0; i < n; ++i) {
                    int l = CRound.nearestInt(iscale * x[xOff + i]);
                    L[lOff + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
                }
                scale = sumlx / suml2;
                best = scale * sumlx;
            }
        }
        return scale;
    }

    private static float weight(int rmseType, float x) {
        return switch (rmseType) {
            case 1 -> x * x;
            case 2 -> 1;
            case 3 -> Math.abs(x);
            default -> (float) Math.sqrt(Math.abs(x));
        };
    }

    /**
     * Q3_K's symmetric fit: start from the max-magnitude scale, then up to 5 passes of moving
     * single values to the level that most improves the x²-weighted least-squares fit.
     * L receives values offset by +nmax.
     */
    static float makeQ3Quants(int n, int nmax, float[] x, int xOff, byte[] L, int lOff) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xOff + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xOff + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; ++i) L[lOff + i] = 0;
            return 0.f;
        }
        float iscale = -nmax / max;
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; ++i) {
            float xi = x[xOff + i];
            int l = CRound.nearestInt(iscale * xi);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lOff + i] = (byte) l;
            float w = xi * xi;
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        for (int itry = 0; itry < 5; ++itry) {
            int nChanged = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xOff + i];
                int li = L[lOff + i];
                float w = xi * xi;
                float slx = sumlx - w * xi * li;
                if (slx > 0) {
                    float sl2 = suml2 - w * li * li;
                    int newL = CRound.nearestInt(xi * sl2 / slx);
                    newL = Math.max(-nmax, Math.min(nmax - 1, newL));
                    if (newL != li) {
                        slx += w * xi * newL;
                        sl2 += w * newL * newL;
                        if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                            L[lOff + i] = (byte) newL;
                            sumlx = slx;
                            suml2 = sl2;
                            ++nChanged;
                        }
                    }
                }
            }
            if (nChanged == 0) break;
        }
        for (int i = 0; i < n; ++i) L[lOff + i] += (byte) nmax;
        return sumlx / suml2;
    }

    /** ggml's get_scale_min_k4: the j-th 6-bit scale of a Q4_K/Q5_K block's 12 packed bytes. */
    static int scaleK4(int j, int[] q) {
        return j < 4 ? q[j] & 63 : (q[j + 4] & 0xf) | ((q[j - 4] >>> 6) << 4);
    }

    /** ggml's get_scale_min_k4: the j-th 6-bit min of a Q4_K/Q5_K block's 12 packed bytes. */
    static int minK4(int j, int[] q) {
        return j < 4 ? q[j + 4] & 63 : (q[j + 4] >>> 4) | ((q[j] >>> 6) << 4);
    }

    /**
     * Packs 8 sub-block scales and mins as 6-bit values relative to their maxima into Q4_K/Q5_K's
     * 12 scale bytes (the inverse of {@link #scaleK4}/{@link #minK4}), as quantize_row_q4_K_ref.
     */
    static int[] packScaleMinK4(float[] scales, float[] mins, float maxScale, float maxMin) {
        float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
        float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
        int[] q = new int[12];
        for (int j = 0; j < 8; ++j) {
            int ls = Math.min(63, CRound.nearestInt(invScale * scales[j]) & 0xff); // C keeps a uint8_t
            int lm = Math.min(63, CRound.nearestInt(invMin * mins[j]) & 0xff);
            if (j < 4) {
                q[j] = ls;
                q[j + 4] = lm;
            } else {
                q[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
                q[j - 4] |= (ls >>> 4) << 6;
                q[j] |= (lm >>> 4) << 6;
            }
        }
        return q;
    }

    /** Q4_K/Q5_K sub-block weights: x's RMS over the 32 values plus |x| (quantize_row_q4_K_ref). */
    static void rmsPlusAbsWeights(float[] x, int xOff, float[] weights) {
        float sumX2 = 0;
        for (int l = 0; l < 32; ++l) sumX2 += x[xOff + l] * x[xOff + l];
        float avX = (float) Math.sqrt(sumX2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = avX + Math.abs(x[xOff + l]);
    }
}
