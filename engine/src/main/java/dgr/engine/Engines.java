package dgr.engine;

import dgr.engine.deepseek4.Dsv4Engine;
import dgr.engine.llama.LlamaEngine;
import dgr.engine.llama.LlamaVariant;
import dgr.gguf.GgufArtifact;
import java.nio.file.Path;

/** Builds the engine for a GGUF artifact from its {@code general.architecture}. */
public final class Engines {
    private Engines() {}

    public static Engine load(Path gguf, EngineOptions opts) {
        GgufArtifact a = GgufArtifact.open(gguf);
        try {
            String arch = a.metadata().getString("general.architecture", "");
            boolean llama = LlamaVariant.of(arch) != null;
            if (!llama && !arch.equals("deepseek4")) {
                throw new IllegalArgumentException("unsupported architecture '" + arch + "' in " + gguf
                        + "; dgr supports " + LlamaVariant.names() + ", deepseek4");
            }
            if (!llama && !opts.cacheTypes().isF32()) {
                throw new IllegalArgumentException("--cache-type-k/--cache-type-v " + opts.cacheTypes() + ": deepseek4 keeps its"
                        + " state (latent window, compressed entries, compressor and indexer rings) in f32 only; the cache"
                        + " types are for llama-family models");
            }
            ModelCheck.require(a); // before anything is sized from the metadata
            String sha256 = ArtifactHash.sha256(a.parts().getFirst().path());
            // The llama graph and its variants (what each changes: LlamaVariant), or DeepSeek-V4.
            return llama ? new LlamaEngine(a, sha256, opts) : new Dsv4Engine(a, sha256, opts);
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }

    /**
     * One line for benchmark reports and capability reports on what speeds the kernels' memory
     * access on this machine (aligned activations, huge pages, prefetch, the native 8-bit image);
     * none of it changes a result.
     */
    public static String kernelMemoryReport() {
        return dgr.engine.kernel.SimdKernels.memoryReport();
    }
}
