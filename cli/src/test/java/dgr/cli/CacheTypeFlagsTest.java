package dgr.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.KvCacheType;
import dgr.engine.KvCacheTypes;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Issue 26 item 4: serve, run and bench take llama.cpp's --cache-type-k/-v (and -ctk/-ctv), f32 unless told. */
class CacheTypeFlagsTest {
    @Test
    void serveRunAndBenchTakeLlamaCppsCacheTypeFlags() {
        assertThat(ServeFlagsTest.serve("-m", "x.gguf").engine().cacheTypes()).isEqualTo(KvCacheTypes.F32);
        assertThat(ServeFlagsTest.serve("-m", "x.gguf", "--cache-type-k", "q8_0", "--cache-type-v", "f16").engine().cacheTypes())
                .isEqualTo(new KvCacheTypes(KvCacheType.Q8_0, KvCacheType.F16));
        assertThat(ServeFlagsTest.serve("-m", "x.gguf", "-ctk", "bf16", "-ctv", "bf16").engine().cacheTypes())
                .isEqualTo(KvCacheTypes.of(KvCacheType.BF16));
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs("--cache-type-k", "f16", "--cache-type-v", "q8_0");
        assertThat(run.model.engineOptions().cacheTypes()).isEqualTo(new KvCacheTypes(KvCacheType.F16, KvCacheType.Q8_0));
        BenchCommand bench = new BenchCommand();
        new CommandLine(bench).parseArgs("--in-process", "-ctk", "q8_0", "-ctv", "q8_0");
        assertThat(bench.cache.types()).isEqualTo(KvCacheTypes.of(KvCacheType.Q8_0));
    }

    @Test
    void anUnknownCacheTypeIsRefusedNamingTheFlagAndTheTypesDgrStores() {
        assertThatThrownBy(() -> ServeFlagsTest.serve("-m", "x.gguf", "--cache-type-v", "q4_1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--cache-type-v must be one of f32, f16, bf16, q8_0, not 'q4_1' (llama.cpp's q4_1 is not implemented in dgr)");
        assertThatThrownBy(() -> ServeFlagsTest.serve("-m", "x.gguf", "-ctk", "F16"))
                .hasMessage("--cache-type-k must be one of f32, f16, bf16, q8_0, not 'F16'");
    }
}
