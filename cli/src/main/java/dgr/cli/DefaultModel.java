package dgr.cli;

import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The built-in default model: {@code llama-tiny} Q4_0 (seed 42), made by {@code synth} on first use
 * and cached under {@code $XDG_CACHE_HOME/dgr/models} (default {@code ~/.cache/dgr/models}), so the
 * first command a newcomer types does something real without a download. The {@code v4} lane's
 * default is {@code dsv4-tiny} Q4_0 (seed 42), made and cached the same way.
 */
public final class DefaultModel {
    public static final SynthPreset PRESET = SynthPreset.LLAMA_TINY;
    public static final String QUANT = "Q4_0";
    public static final long SEED = 42;
    /** The default model of the benchmark's {@code v4} (deepseek4) lane. */
    public static final SynthPreset V4_PRESET = SynthPreset.DSV4_TINY;
    /**
     * The benchmark's dense default: llama-110m Q4_0 (12 layers, 768 wide, 134 M parameters, 76 MB). A
     * token's forward pass costs enough that batching pays and then stops paying on a laptop's cores, so
     * the sweep finds a real knee; llama-tiny's 2 layers measure per-request overhead, not batching.
     */
    public static final SynthPreset BENCH_PRESET = SynthPreset.LLAMA_110M;

    private DefaultModel() {}

    public static Path cacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("dgr");
    }

    /** The default model's path, synthesizing it first when it is not cached yet. */
    public static Path path() {
        return cached(PRESET);
    }

    /** The default {@code v4}-lane model's path ({@code dsv4-tiny}), synthesized on first use. */
    public static Path v4Path() {
        return cached(V4_PRESET);
    }

    /** The default model of a benchmark lane: {@code dense} (llama-110m) or {@code v4} (dsv4-tiny). */
    public static Path forLane(String lane) {
        return "v4".equals(lane) ? v4Path() : cached(BENCH_PRESET);
    }

    private static synchronized Path cached(SynthPreset preset) {
        Path p = cacheDir().resolve("models").resolve(preset.name() + "-" + QUANT + "-seed" + SEED + ".gguf");
        if (!Files.isRegularFile(p)) {
            System.err.println("dgr: making the built-in " + preset.name() + " model " + p + " (first use)");
            // Write beside and move, so a run interrupted mid-write never leaves a truncated cache entry.
            Path tmp = p.resolveSibling(p.getFileName() + ".tmp");
            Synth.write(preset, QuantMix.parse(QUANT), SEED, tmp);
            try {
                Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot move " + tmp + " to " + p, e);
            }
        }
        return p;
    }
}
