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
            String sha256 = ArtifactHash.sha256(a.parts().getFirst().path());
            // The llama graph and its variants (what each changes: LlamaVariant), or DeepSeek-V4.
            if (LlamaVariant.of(arch) != null) return new LlamaEngine(a, sha256, opts);
            if (arch.equals("deepseek4")) return new Dsv4Engine(a, sha256, opts);
            throw new IllegalArgumentException("unsupported architecture '" + arch + "' in " + gguf
                    + "; dgr supports " + LlamaVariant.names() + ", deepseek4");
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
