package dgr.cli;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Options shared by the commands that load a model: which file, which engine, how many threads. */
final class ModelOptions {
    @Option(names = {"-m", "--model"}, description = "GGUF model file (default: the built-in llama-tiny Q4_0)")
    Path model;

    @Option(names = "--engine", defaultValue = "auto", description = EngineOptions.ENGINE_HELP)
    String engine;

    @Option(names = {"-t", "--threads"}, description = "threads per forward pass (default: all cores)")
    Integer threads;

    @Option(names = {"-c", "--ctx-size"}, description = "context length per session (default: the model's, capped at 4096)")
    Integer contextLength;

    @picocli.CommandLine.Mixin
    CacheTypeOptions cache = new CacheTypeOptions();

    Path modelPath() {
        return model != null ? model : DefaultModel.path();
    }

    EngineOptions engineOptions() {
        EngineOptions o = cache.apply(EngineOptions.defaults());
        o = o.withKind(EngineOptions.Kind.ofFlag(engine));
        if (threads != null) {
            if (threads < 1) throw new IllegalArgumentException("--threads must be at least 1");
            o = o.withThreads(threads);
        }
        if (contextLength != null) {
            if (contextLength < 1) throw new IllegalArgumentException("--ctx-size must be at least 1");
            o = o.withContextLength(contextLength);
        }
        return o;
    }

    Engine load() {
        return Engines.load(modelPath(), engineOptions());
    }

    /** Parses "1,2,3" (spaces allowed) into token ids with a precise error. */
    static int[] parseTokens(String s) {
        String[] parts = s.trim().split("[,\\s]+");
        int[] ids = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                ids[i] = Integer.parseInt(parts[i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--tokens: '" + parts[i] + "' is not a token id");
            }
        }
        return ids;
    }
}
