package dgr.cli;

import dgr.engine.EngineOptions;
import dgr.engine.KvCacheType;
import dgr.engine.KvCacheTypes;
import picocli.CommandLine.Option;

/** {@code --cache-type-k} and {@code --cache-type-v}, named and valued as llama.cpp's. */
final class CacheTypeOptions {
    private static final String HELP = " (f32, f16, bf16 or q8_0; default f32). f16/bf16 halve the cache, q8_0 keeps 17/64 of"
            + " it; values are rounded on store, so logits move by that rounding (batch-invariant still)";

    @Option(names = {"-ctk", "--cache-type-k"}, paramLabel = "TYPE", defaultValue = "f32", description = "how the K cache stores keys" + HELP)
    String k;

    @Option(names = {"-ctv", "--cache-type-v"}, paramLabel = "TYPE", defaultValue = "f32", description = "how the V cache stores values" + HELP)
    String v;

    KvCacheTypes types() {
        return new KvCacheTypes(KvCacheType.ofFlag("--cache-type-k", k), KvCacheType.ofFlag("--cache-type-v", v));
    }

    EngineOptions apply(EngineOptions o) {
        return o.withCacheTypes(types());
    }
}
