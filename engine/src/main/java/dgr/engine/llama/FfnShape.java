package dgr.engine.llama;

/**
 * An architecture's FFN as llama.cpp builds it: dense, a mixture of experts
 * ({@link LlamaConfig.Experts}), or either as the file's {@code expert_count} says (llama.cpp
 * builds Mixtral under {@code llama}, and Mistral-named converters write {@code mistral}); with
 * experts, whether the chosen ones' probabilities are divided by their sum (llama.cpp's
 * {@code norm_w}), which shared expert joins them, and how the architecture routes ({@link Routing}).
 */
record FfnShape(Kind kind, boolean normWeights, SharedExpert shared, Routing routing) {
    FfnShape(Kind kind, boolean normWeights, SharedExpert shared) {
        this(kind, normWeights, shared, Routing.SOFTMAX);
    }

    /**
     * PLAIN: dense and ungated, {@code down(act(up·x + b)) + b}: GELU where the variant has it
     * (StarCoder2, GPT-NeoX, GPT-2, Phi-2), else squared ReLU (Arcee without biases, Nemotron with them).
     */
    enum Kind { DENSE, DENSE_OR_EXPERTS, EXPERTS, PLAIN }

    static final FfnShape DENSE = new FfnShape(Kind.DENSE, true, SharedExpert.NONE);
    static final FfnShape PLAIN = new FfnShape(Kind.PLAIN, true, SharedExpert.NONE);
    static final FfnShape DENSE_OR_EXPERTS = new FfnShape(Kind.DENSE_OR_EXPERTS, true, SharedExpert.NONE);
    static final FfnShape EXPERTS = new FfnShape(Kind.EXPERTS, true, SharedExpert.NONE);

    /** Whether a key is read: not at all, with a default, or required (llama.cpp's loader fails without it). */
    enum KeyUse { NONE, OPTIONAL, REQUIRED }

    /**
     * How an architecture's experts are routed, as llama.cpp reads its files:
     * {@code fixedGating} overrides {@code expert_gating_func} (gpt-oss's 3, Llama 4's sigmoid; 0
     * reads the key, {@code defaultGating} where it is missing, softmax 1 always allowed and
     * sigmoid 2 where {@code sigmoidAllowed}); {@code leadingDense} reads
     * {@code leading_dense_block_count}; {@code interleave} requires
     * {@code interleave_moe_layer_step}; {@code normFromKey} takes {@code norm_w} from
     * {@code expert_weights_norm} (false without it) instead of the FFN's {@code normWeights};
     * {@code choiceBias} reads {@code exp_probs_b}, added to the probabilities to choose;
     * {@code weightBeforeFfn} scales each expert's input by its weight (Llama 4).
     */
    record Routing(int fixedGating, int defaultGating, boolean sigmoidAllowed, KeyUse leadingDense, boolean interleave,
                   boolean normFromKey, KeyUse choiceBias, boolean weightBeforeFfn) {
        /** Mixtral's and most others': softmax from the key (1), every layer, no bias. */
        static final Routing SOFTMAX = new Routing(0, 1, false, KeyUse.NONE, false, false, KeyUse.NONE, false);

        /** DeepSeek-V3's family: softmax or sigmoid by the key, a dense lead, norm by key, an optional choice bias. */
        static final Routing V3 = new Routing(0, 1, true, KeyUse.OPTIONAL, false, true, KeyUse.OPTIONAL, false);

        Routing withDefaultGating(int g) {
            return new Routing(fixedGating, g, sigmoidAllowed, leadingDense, interleave, normFromKey, choiceBias, weightBeforeFfn);
        }

        Routing withChoiceBias(KeyUse b) {
            return new Routing(fixedGating, defaultGating, sigmoidAllowed, leadingDense, interleave, normFromKey, b, weightBeforeFfn);
        }
    }

    /**
     * A shared expert: none; {@code GATED}, always there and scaled by a sigmoid of a one-row gate
     * (Qwen2-MoE, {@code expert_shared_feed_forward_length} or {@code feed_forward_length} wide);
     * {@code PLAIN}, there when {@code expert_shared_feed_forward_length} is above 0 and added as it
     * is (Granite MoE Shared); {@code COUNTED}, {@code expert_shared_count} experts of
     * {@code expert_feed_forward_length} in one ungated FFN, there when the count is above 0 (DeepSeek);
     * {@code EXPERT_WIDE}, one as wide as the experts, always there and added as it is (Llama 4);
     * {@code ALWAYS}, always there and added as it is, {@code expert_shared_feed_forward_length} or
     * {@code feed_forward_length} wide (Hunyuan).
     */
    public enum SharedExpert { NONE, GATED, PLAIN, COUNTED, EXPERT_WIDE, ALWAYS }
}
