package dgr.bench;

import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Path;

/** Synthesizes llama-tiny Q4_0 once per test class directory. */
final class TinyModel {
    private TinyModel() {}

    static Path write(Path dir) {
        Path p = dir.resolve("llama-tiny-q4_0.gguf");
        Synth.write(SynthPreset.LLAMA_TINY, QuantMix.parse("Q4_0"), 42, p);
        return p;
    }

    /** The checked-in schema (the repository root comes from surefire's dgr.repo.root). */
    static Path schema() {
        String root = System.getProperty("dgr.repo.root", "..");
        return Path.of(root, "docs", "schemas", "saturation.schema.json");
    }
}
