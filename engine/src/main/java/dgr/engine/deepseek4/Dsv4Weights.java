package dgr.engine.deepseek4;

import dgr.gguf.GgufArtifact;
import dgr.gguf.GgufFormatException;
import dgr.gguf.TensorInfo;

/**
 * Every tensor the forward pass reads, decoded once to float32 at load (DSV4-SPEC 1.2). Only the
 * layers of the engine's span are loaded; MTP (nextn) layers are never loaded: they exist for
 * speculative drafting, which normal decoding does not use.
 */
final class Dsv4Weights {
    /** Hyper-connection mixing parameters of one sub-layer (or of the head). */
    record Hc(Mat fn, float[] base, float[] scale) {}

    /** A compressor (CSA/HCA main or indexer keys): value and score projections, position bias, norm. */
    record Compressor(Mat kv, Mat gate, Mat ape, float[] norm, int ratio, int width) {
        boolean overlap() { return ratio == 4; }
    }

    /** Lightning indexer of a CSA layer. */
    record Indexer(Mat proj, Mat qb, Compressor keys) {}

    record Layer(int index, int ratio,
                 float[] attnNorm, float[] sinks, Mat qa, float[] qaNorm, Mat qb, Mat kv, float[] kvNorm,
                 Mat outA, Mat outB, Hc hcAttn, Hc hcFfn,
                 Compressor compressor, Indexer indexer,
                 float[] ffnNorm, Mat router, int[] tid2eid, float[] probBias,
                 Mat[] gateExp, Mat[] upExp, Mat[] downExp,
                 Mat gateSh, Mat upSh, Mat downSh) {
        boolean hashRouted() { return tid2eid != null; }
    }

    final Mat tokenEmbd;      // null unless this span is the first stage
    final float[] outputNorm; // the rest of the head: null unless last stage
    final Mat output;
    final Hc hcHead;
    final Layer[] layers;     // indexed by layer - firstLayer
    final long parameters;

    Dsv4Weights(GgufArtifact f, Dsv4Config c, int firstLayer, int endLayer) {
        long[] count = {0};
        Loader ld = new Loader(f, count);
        boolean first = firstLayer == 0;
        boolean last = endLayer == c.nLayer();
        tokenEmbd = first ? ld.mat("token_embd.weight", c.vocab(), c.nEmbd()) : null;
        outputNorm = last ? ld.vec("output_norm.weight", c.nEmbd()) : null;
        output = last ? ld.mat("output.weight", c.vocab(), c.nEmbd()) : null;
        hcHead = last ? new Hc(ld.mat("output_hc_fn.weight", c.hc(), c.hc() * c.nEmbd()),
                ld.vec("output_hc_base.weight", c.hc()), ld.vec("output_hc_scale.weight", 1)) : null;
        layers = new Layer[endLayer - firstLayer];
        for (int i = firstLayer; i < endLayer; i++) layers[i - firstLayer] = layer(ld, c, i);
        parameters = count[0];
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
                    ld.mat(b + "attn_compressor_ape.weight", ratio, cw), ld.vec(b + "attn_compressor_norm.weight", d), ratio, d);
        }
        if (ratio == 4) {
            int di = c.idxDim(), hi = c.idxHeads();
            if (di <= 0 || hi <= 0 || c.idxTopK() <= 0) {
                throw new GgufFormatException("layer " + i + " is a CSA layer but the indexer keys are missing or zero");
            }
            if (c.nRot() > di) throw new GgufFormatException("indexer key_length " + di + " is smaller than the rope dims " + c.nRot());
            Compressor keys = new Compressor(ld.mat(b + "indexer_compressor_kv.weight", 2 * di, nEmbd),
                    ld.mat(b + "indexer_compressor_gate.weight", 2 * di, nEmbd), ld.mat(b + "indexer_compressor_ape.weight", 4, 2 * di),
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
        Mat gates = ld.mat3(b + "ffn_gate_exps.weight", nEmbd, ff, e);
        Mat ups = ld.mat3(b + "ffn_up_exps.weight", nEmbd, ff, e);
        Mat downs = ld.mat3(b + "ffn_down_exps.weight", ff, nEmbd, e);
        Mat[] g = new Mat[e], u = new Mat[e], dn = new Mat[e];
        for (int x = 0; x < e; x++) {
            g[x] = gates.slice(x * ff, ff);
            u[x] = ups.slice(x * ff, ff);
            dn[x] = new Mat(downs.w(), x * nEmbd * ff, nEmbd, ff);
        }
        int fsh = ff * c.nShared();
        Mat gateSh = null, upSh = null, downSh = null;
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
                ld.matAnyShape(b + "attn_output_a.weight", c.oGroups() * c.oLoraRank(), hd / c.oGroups()),
                ld.mat(b + "attn_output_b.weight", nEmbd, c.oGroups() * c.oLoraRank()),
                new Hc(ld.mat(b + "hc_attn_fn.weight", m, hcD), ld.vec(b + "hc_attn_base.weight", m), ld.vec(b + "hc_attn_scale.weight", 3)),
                new Hc(ld.mat(b + "hc_ffn_fn.weight", m, hcD), ld.vec(b + "hc_ffn_base.weight", m), ld.vec(b + "hc_ffn_scale.weight", 3)),
                comp, idx,
                ld.vec(b + "ffn_norm.weight", nEmbd), ld.mat(b + "ffn_gate_inp.weight", e, nEmbd), tid2eid, bias,
                g, u, dn, gateSh, upSh, downSh);
    }

    /** Reads tensors with shape checks that name the tensor and both shapes. */
    private record Loader(GgufArtifact f, long[] count) {
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

        Mat mat(String name, int rows, int cols) {
            TensorInfo t = f.tensor(name);
            expect(t, cols, rows);
            count[0] += (long) rows * cols;
            return Mat.of(Dequant.floats(t), rows, cols);
        }

        /** attn_output_a is {H·d/G, R_o·G} in the file; llama.cpp views it 3-D. Same bytes either way. */
        Mat matAnyShape(String name, int rows, int cols) {
            TensorInfo t = f.tensor(name);
            if (t.shape()[0] != cols || t.elementCount() != (long) rows * cols) {
                throw new GgufFormatException("tensor '" + name + "' has shape " + t.shapeString() + ", expected ["
                        + cols + ", " + rows + "]");
            }
            count[0] += (long) rows * cols;
            return Mat.of(Dequant.floats(t), rows, cols);
        }

        /** A stack of {@code n} matrices {cols, rows} (ggml {cols, rows, n}) as one tall matrix. */
        Mat mat3(String name, int cols, int rows, int n) {
            TensorInfo t = f.tensor(name);
            expect(t, cols, rows, n);
            count[0] += (long) rows * cols * n;
            return Mat.of(Dequant.floats(t), rows * n, cols);
        }
    }
}
