package dgr.gguf.arch;

/**
 * What one architecture's blocks look like in its GGUF files, as llama.cpp builds them: the facts
 * that decide which tensors a file has and how the graph joins them ({@link Architectures}).
 *
 * @param name                the {@code general.architecture} value
 * @param neox                llama.cpp's rope type: NeoX pairs {@code (i, i + n/2)}, else {@code (2i, 2i+1)}
 * @param qkNorm              where Q and K are normalised ({@code attn_q_norm}, {@code attn_k_norm}), if at all
 * @param preNorms            each branch's input normalised ({@code attn_norm}, and the FFN's pre-norm)
 * @param postNorms           each branch's output normalised ({@code post_attention_norm}, {@code post_ffw_norm})
 * @param gelu                GELU (tanh form) in the FFN instead of SiLU
 * @param noRopeStep          every {@code noRopeStep}-th layer skips the rotation; 0 rotates all
 * @param layerNorm           LayerNorm blocks (the GPT lineage), or null for RMSNorm ones
 * @param ungatedFfn          the FFN is {@code down(act(up·x))}, no {@code ffn_gate}
 * @param oneNormBothBranches one norm feeds attention and FFN side by side (Phi-2, Command R): no FFN pre-norm
 * @param ffnNormTensor       the tensor of the FFN's pre-norm, {@code blk.N.NAME.weight}
 * @param learnedPositions    positions from a learned {@code position_embd} table (GPT-2) instead of rotation
 */
public record Architecture(String name, boolean neox, QkNorm qkNorm, boolean preNorms, boolean postNorms, boolean gelu,
                           int noRopeStep, LayerNorm layerNorm, boolean ungatedFfn, boolean oneNormBothBranches,
                           String ffnNormTensor, boolean learnedPositions) {

    /** Where Q and K are normalised: not at all, each head on its own, or all of Q and all of K at once. */
    public enum QkNorm { NONE, PER_HEAD, WHOLE }

    /**
     * LayerNorm blocks: {@code x − mean}, scaled, times the weight, plus a bias with {@code normBias}
     * ({@code attention.layer_norm_epsilon}), on both branches and before the head; with
     * {@code outputBias}, the attention output and the ungated FFN carry biases, and so do the logits.
     */
    public record LayerNorm(boolean normBias, boolean outputBias) {}

    Architecture withNeox() { return with(true, qkNorm, preNorms, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withQkNorm(QkNorm q) { return with(neox, q, preNorms, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withoutPreNorms() { return with(neox, qkNorm, false, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withPostNorms() { return with(neox, qkNorm, preNorms, true, gelu, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withGelu() { return with(neox, qkNorm, preNorms, postNorms, true, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withNoRopeStep(int step) { return with(neox, qkNorm, preNorms, postNorms, gelu, step, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withLayerNorm(boolean normBias, boolean outputBias) { return with(neox, qkNorm, preNorms, postNorms, gelu, noRopeStep, new LayerNorm(normBias, outputBias), ungatedFfn, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withUngatedFfn() { return with(neox, qkNorm, preNorms, postNorms, gelu, noRopeStep, layerNorm, true, oneNormBothBranches, ffnNormTensor, learnedPositions); }

    Architecture withOneNormBothBranches() { return with(neox, qkNorm, preNorms, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, true, ffnNormTensor, learnedPositions); }

    Architecture withFfnNormTensor(String t) { return with(neox, qkNorm, preNorms, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, t, learnedPositions); }

    Architecture withLearnedPositions() { return with(neox, qkNorm, preNorms, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, oneNormBothBranches, ffnNormTensor, true); }

    private Architecture with(boolean neox, QkNorm qkNorm, boolean preNorms, boolean postNorms, boolean gelu, int noRopeStep,
                              LayerNorm layerNorm, boolean ungatedFfn, boolean oneNorm, String ffnNormTensor, boolean learned) {
        return new Architecture(name, neox, qkNorm, preNorms, postNorms, gelu, noRopeStep, layerNorm, ungatedFfn, oneNorm,
                ffnNormTensor, learned);
    }
}
