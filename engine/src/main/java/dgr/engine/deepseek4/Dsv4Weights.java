package dgr.engine.deepseek4;

import dgr.engine.kernel.Kernels;
import dgr.engine.kernel.WeightMatrix;
import dgr.gguf.GgufArtifact;
import dgr.gguf.GgufFormatException;
import dgr.gguf.TensorInfo;
import java.lang.foreign.Arena;

/**
 * Every tensor the forward pass reads (DSV4-SPEC 1.2). Matrices are {@link WeightMatrix}es in the
 * layout the engine's kernels read fastest ({@link Kernels#prepare}: 8-bit interleaved rows for
 * {@code java-q8}, spans for {@code java-simd}, the file's bytes otherwise), so a Q8_0 or MXFP4
 * model is never widened to float32; vectors, the compressor position bias and the head's mixing
 * weights are decoded to float32. Only the layers of the engine's span are loaded; MTP (nextn)
 * layers are never loaded: they exist for speculative drafting, which normal decoding does not use.
 */
final class Dsv4Weights {
    /** Hyper-connection mixing parameters of one sub-layer (or of the head): {@code fn} has one row per mixing output. */
    record Hc(WeightMatrix fn, float[] base, float[] scale) {}

    /** A compressor (CSA/HCA main or indexer keys): value and score projections, position bias, norm. */
    record Compressor(WeightMatrix kv, WeightMatrix gate, Mat ape, float[] norm, int ratio, int width) {
        boolean overlap() { return ratio == 4; }
    }

    /** Lightning indexer of a CSA layer. */
    record Indexer(WeightMatrix proj, WeightMatrix qb, Compressor keys) {}

    /** {@code outA[g]}: the output LoRA-A of head group {@code g} ({@code R_o × H·d/G}). */
    record Layer(int index, int ratio,
                 float[] attnNorm, float[] sinks, WeightMatrix qa, float[] qaNorm, WeightMatrix qb, WeightMatrix kv, float[] kvNorm,
                 WeightMatrix[] outA, WeightMatrix outB, Hc hcAttn, Hc hcFfn,
                 Compressor compressor, Indexer indexer,
                 float[] ffnNorm, WeightMatrix router, int[] tid2eid, float[] probBias,
                 WeightMatrix[] gateExp, WeightMatrix[] upExp, WeightMatrix[] downExp,
                 WeightMatrix gateSh, WeightMatrix upSh, WeightMatrix downSh) {
        boolean hashRouted() { return tid2eid != null; }
    }

    final WeightMatrix tokenEmbd; // the file's rows (lookups decode one); null unless this span is the first stage
    final float[] outputNorm;     // the rest of the head: null unless last stage
    final WeightMatrix output;
    final Hc hcHead;
    final Layer[] layers;         // indexed by layer - firstLayer
    final long parameters;

    Dsv4Weights(GgufArtifact f, Dsv4Config c, int firstLayer, int endLayer, Kernels k, Arena arena) {
        long[] count = {0};
        Loader ld = new Loader(f, count, k, arena);
        boolean first = firstLayer == 0;
        boolean last = endLayer == c.nLayer();
        tokenEmbd = first ? ld.file("token_embd.weight", c.vocab(), c.nEmbd()) : null;
        outputNorm = last ? ld.vec("output_norm.weight", c.nEmbd()) : null;
        output = last ? ld.mat("output.weight", c.vocab(), c.nEmbd()) : null;
        hcHead = last ? new Hc(ld.mat("output_hc_fn.weight", c.hc(), c.hc() * c.nEmbd()),
                ld.vec("output_hc_base.weight", c.hc()), ld.vec("output_hc_scale.weight", 1)) : null;
        layers = new Layer[endLayer - firstLayer];
        for (int i = firstLayer; i < endLayer; i++) layers[i - firstLayer] = layer(ld, c, i);
        parameters = count[0];
    }

    /** The widest input any matrix of these weights reads (kernels' scratch rows are this wide). */
    static int widestInput(Dsv4Config c) {
        int hd = c.nHead() * c.headDim();
        return Math.max(Math.max(c.residualWidth(), hd), Math.max(c.ffExp() * Math.max(1, c.nShared()), c.oGroups() * c.oLoraRank()));
    }

    private static Layer layer(Loader ld, Dsv4Config c, int i) {
        String b = "blk." + i + ".";
        int d = c.headDim(), nEmbd = c.nEmbd(), hd = c.nHead() * d;
        int ratio = c.ratio(i);
        Compressor comp = null;
        Indexer idx = null;
        if (ratio != 0) {
            int cw = (ratio == 4 ? 2 : 1) * d;
            comp = new Compressor(ld.mat(b + "attn_compressor_kv.weight", cw, nEmbd), ld.mat(b + "attn_compressor_gate.weight", cw, nEmbd),
                    ld.floats(b + "attn_compressor_ape.weight", ratio, cw), ld.vec(b + "attn_compressor_norm.weight", d), ratio, d);
        }
        if (ratio == 4) {
            int di = c.idxDim(), hi = c.idxHeads();
            if (di <= 0 || hi <= 0 || c.idxTopK() <= 0) {
                throw new GgufFormatException("layer " + i + " is a CSA layer but the indexer keys are missing or zero");
            }
            if (c.nRot() > di) throw new GgufFormatException("indexer key_length " + di + " is smaller than the rope dims " + c.nRot());
            if (di % 8 != 0) throw new GgufFormatException("indexer key_length " + di + " is not a multiple of 8 (llama.cpp needs 64)");
            Compressor keys = new Compressor(ld.mat(b + "indexer_compressor_kv.weight", 2 * di, nEmbd),
                    ld.mat(b + "indexer_compressor_gate.weight", 2 * di, nEmbd), ld.floats(b + "indexer_compressor_ape.weight", 4, 2 * di),
                    ld.vec(b + "indexer_compressor_norm.weight", di), 4, di);
            idx = new Indexer(ld.mat(b + "indexer.proj.weight", hi, nEmbd), ld.mat(b + "indexer.attn_q_b.weight", hi * di, c.qLoraRank()), keys);
        }
        int e = c.nExpert(), ff = c.ffExp();
        boolean hash = i < c.nHash();
        int[] tid2eid = null;
        float[] bias = null;
        if (hash) {
            if (ld.f.tensorOrNull(b + "exp_probs_b.bias") != null) {
                throw new GgufFormatException("hash layer " + i + " must not have exp_probs_b.bias");
            }
            TensorInfo t = ld.f.tensor(b + "ffn_gate_tid2eid.weight");
            ld.expect(t, c.nExpertUsed(), c.vocab());
            tid2eid = Dequant.ints(t);
            for (int v : tid2eid) {
                if (v < 0 || v >= e) throw new GgufFormatException(t.name() + " holds expert id " + v + " outside 0.." + (e - 1));
            }
            ld.count[0] += tid2eid.length;
        } else {
            bias = ld.vec(b + "exp_probs_b.bias", e);
        }
        WeightMatrix[] g = ld.parts(ld.stack(b + "ffn_gate_exps.weight", nEmbd, ff, e), e);
        WeightMatrix[] u = ld.parts(ld.stack(b + "ffn_up_exps.weight", nEmbd, ff, e), e);
        WeightMatrix[] dn = ld.parts(ld.stack(b + "ffn_down_exps.weight", ff, nEmbd, e), e);
        int fsh = ff * c.nShared();
        WeightMatrix gateSh = null, upSh = null, downSh = null;
        if (fsh > 0) {
            gateSh = ld.mat(b + "ffn_gate_shexp.weight", fsh, nEmbd);
            upSh = ld.mat(b + "ffn_up_shexp.weight", fsh, nEmbd);
            downSh = ld.mat(b + "ffn_down_shexp.weight", nEmbd, fsh);
        }
        int m = c.hcMix(), hcD = c.hc() * nEmbd;
        return new Layer(i, ratio,
                ld.vec(b + "attn_norm.weight", nEmbd), ld.vec(b + "attn_sinks.weight", c.nHead()),
                ld.mat(b + "attn_q_a.weight", c.qLoraRank(), nEmbd), ld.vec(b + "attn_q_a_norm.weight", c.qLoraRank()),
                ld.mat(b + "attn_q_b.weight", hd, c.qLoraRank()),
                ld.mat(b + "attn_kv.weight", d, nEmbd), ld.vec(b + "attn_kv_a_norm.weight", d),
                ld.parts(ld.outputA(b + "attn_output_a.weight", c.oGroups() * c.oLoraRank(), hd / c.oGroups()), c.oGroups()),
                ld.mat(b + "attn_output_b.weight", nEmbd, c.oGroups() * c.oLoraRank()),
                new Hc(ld.mat(b + "hc_attn_fn.weight", m, hcD), ld.vec(b + "hc_attn_base.weight", m), ld.vec(b + "hc_attn_scale.weight", 3)),
                new Hc(ld.mat(b + "hc_ffn_fn.weight", m, hcD), ld.vec(b + "hc_ffn_base.weight", m), ld.vec(b + "hc_ffn_scale.weight", 3)),
                comp, idx,
                ld.vec(b + "ffn_norm.weight", nEmbd), ld.mat(b + "ffn_gate_inp.weight", e, nEmbd), tid2eid, bias,
                g, u, dn, gateSh, upSh, downSh);
    }

    /** Reads tensors with shape checks that name the tensor and both shapes, and prepares matrices for {@code k}. */
    private record Loader(GgufArtifact f, long[] count, Kernels k, Arena arena) {
        float[] vec(String name, int n) {
            TensorInfo t = f.tensor(name);
            if (t.elementCount() != n) {
                throw new GgufFormatException("tensor '" + name + "' has shape " + t.shapeString() + ", expected {" + n + "}");
            }
            count[0] += n;
            return Dequant.floats(t);
        }

        void expect(TensorInfo t, long... ne) {
            boolean ok = t.shape().length >= ne.length;
            for (int i = 0; ok && i < t.shape().length; i++) ok = t.shape()[i] == (i < ne.length ? ne[i] : 1);
            if (!ok) {
                throw new GgufFormatException("tensor '" + t.name() + "' has shape " + t.shapeString() + ", expected "
                        + java.util.Arrays.toString(ne));
            }
        }

        /** A small tensor {cols, rows} decoded to float32. */
        Mat floats(String name, int rows, int cols) {
            TensorInfo t = f.tensor(name);
            expect(t, cols, rows);
            count[0] += (long) rows * cols;
            return Mat.of(Dequant.floats(t), rows, cols);
        }

        /** A matrix {cols, rows} as the file holds it (no copy). */
        WeightMatrix file(String name, int rows, int cols) {
            TensorInfo t = f.tensor(name);
            expect(t, cols, rows);
            count[0] += (long) rows * cols;
            return WeightMatrix.of(t);
        }

        /** A matrix {cols, rows} in the kernels' layout. */
        WeightMatrix mat(String name, int rows, int cols) {
            return k.prepare(file(name, rows, cols), arena);
        }

        /** attn_output_a is {H·d/G, R_o·G} in the file; llama.cpp views it 3-D {H·d/G, R_o, G}. Same bytes either way. */
        WeightMatrix outputA(String name, int rows, int cols) {
            TensorInfo t = f.tensor(name);
            if (t.shape()[0] != cols || t.elementCount() != (long) rows * cols) {
                throw new GgufFormatException("tensor '" + name + "' has shape " + t.shapeString() + ", expected ["
                        + cols + ", " + rows + "]");
            }
            count[0] += (long) rows * cols;
            return WeightMatrix.of(t);
        }

        /** A stack of {@code n} matrices {cols, rows} (ggml {cols, rows, n}) as one tall matrix, as the file holds it. */
        WeightMatrix stack(String name, int cols, int rows, int n) {
            TensorInfo t = f.tensor(name);
            expect(t, cols, rows, n);
            count[0] += (long) rows * cols * n;
            return WeightMatrix.of(t);
        }

        /**
         * {@code whole} cut into {@code n} equal row ranges, each in the kernels' layout: repacked
         * whole and sliced where each part starts at a row group of that layout, else sliced first.
         */
        WeightMatrix[] parts(WeightMatrix whole, int n) {
            int rows = whole.rows() / n;
            WeightMatrix src = rows % k.rowGroup(whole) == 0 ? k.prepare(whole, arena) : whole;
            WeightMatrix[] out = new WeightMatrix[n];
            for (int p = 0; p < n; p++) {
                WeightMatrix part = src.rowSlice(whole.name() + "[" + p + "]", p * rows, rows);
                out[p] = src == whole ? k.prepare(part, arena) : part;
            }
            return out;
        }
    }
}
