package dgr.cli;

import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code dgr synth --preset NAME --quant TYPE [--seed N] -o FILE}. */
@Command(name = "synth", description = "Write a synthetic GGUF model: a preset shape, seeded weights, a real tokenizer.")
final class SynthCommand implements Callable<Integer> {
    @Option(names = "--preset", required = true, completionCandidates = Presets.class, description = "${COMPLETION-CANDIDATES}")
    String preset;

    @Option(names = "--quant", defaultValue = "Q4_0",
            completionCandidates = Quants.class, description = "${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE})")
    String quant;

    @Option(names = "--seed", defaultValue = "" + Synth.DEFAULT_SEED, description = "weight seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = {"-o", "--output"}, required = true, description = "output GGUF file")
    Path output;

    /** The preset names for help, from the presets themselves so the list cannot go stale. */
    static final class Presets implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return SynthPreset.ALL.stream().map(SynthPreset::name).iterator();
        }
    }

    /** The quantization names for help, as {@link QuantMix#parse} takes them. */
    static final class Quants implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return QuantMix.NAMES.iterator();
        }
    }

    @Override
    public Integer call() {
        SynthPreset p = SynthPreset.byName(preset);
        QuantMix q = QuantMix.parse(quant);
        long t0 = System.nanoTime();
        Synth.Result r = Synth.write(p, q, seed, output);
        double s = (System.nanoTime() - t0) / 1e9;
        System.err.printf("wrote %s: preset %s, %s, seed %d, %s parameters, %d bytes in %.1f s%n", r.path(), p.name(),
                q.name(), seed, InspectCommand.human(r.parameters()), r.bytes(), s);
        return 0;
    }
}
