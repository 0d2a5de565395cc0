package dgr.cli;

import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The built-in default model: {@code llama-tiny} Q4_0 (seed 42), made by {@code synth} on first use
 * and cached under {@code $XDG_CACHE_HOME/dgr/models} (default {@code ~/.cache/dgr/models}), so the
 * first command a newcomer types does something real without a download.
 */
public final class DefaultModel {
    public static final SynthPreset PRESET = SynthPreset.LLAMA_TINY;
    public static final String QUANT = "Q4_0";
    public static final long SEED = 42;

    private DefaultModel() {}

    public static Path cacheDir() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("dgr");
    }

    /** The default model's path, synthesizing it first when it is not cached yet. */
    public static synchronized Path path() {
        Path p = cacheDir().resolve("models").resolve(PRESET.name() + "-" + QUANT + "-seed" + SEED + ".gguf");
        if (!Files.isRegularFile(p)) {
            System.err.println("dgr: making the built-in default model " + p + " (first use)");
            Synth.write(PRESET, QuantMix.parse(QUANT), SEED, p);
        }
        return p;
    }
}
