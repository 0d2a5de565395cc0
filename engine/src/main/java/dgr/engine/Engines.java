package dgr.engine;

import dgr.engine.deepseek4.Dsv4Engine;
import dgr.engine.llama.LlamaEngine;
import dgr.gguf.GgufArtifact;
import java.nio.file.Path;

/** Builds the engine for a GGUF artifact from its {@code general.architecture}. */
public final class Engines {
    private Engines() {}

    public static Engine load(Path gguf, EngineOptions opts) {
        GgufArtifact a = GgufArtifact.open(gguf);
        try {
            String arch = a.metadata().getString("general.architecture", "");
            return switch (arch) {
                // llama.cpp writes "llama" for Llama 1-3, Mistral, TinyLlama and SmolLM; "mistral" is
                // accepted for converters that name it (same tensors, keys under "mistral."); SmolLM3
                // is llama without rotation on every fourth layer. Qwen2
                // (Qwen2, Qwen2.5) is the same graph with Q/K/V biases and NeoX rotary pairs; Qwen3 has
                // no biases but RMS-normalises each head of Q and K before the rotation; Granite (3.x
                // dense) scales embeddings, residual branches, attention scores and logits; Gemma 2
                // has branch-output norms, GELU, alternating sliding-window layers and soft caps; Gemma 3
                // adds Q/K norms, a norm on each branch's output, GELU, and sliding-window layers; Phi-3
                // fuses Q/K/V and gate/up into single tensors and has LongRoPE frequency factors; OLMo 2
                // norms each branch's output instead of its input and all of Q and K.
                case "llama", "mistral", "smollm3", "qwen2", "qwen3", "granite", "gemma2", "gemma3", "phi3", "olmo2" -> new LlamaEngine(a, ArtifactHash.sha256(a.parts().getFirst().path()), opts);
                case "deepseek4" -> new Dsv4Engine(a, ArtifactHash.sha256(a.parts().getFirst().path()), opts);
                default -> throw new IllegalArgumentException("unsupported architecture '" + arch + "' in " + gguf
                        + "; dgr supports llama, mistral, smollm3, qwen2, qwen3, granite, gemma2, gemma3, phi3, olmo2, deepseek4");
            };
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }
}
