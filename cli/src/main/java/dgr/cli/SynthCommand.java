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
    @Option(names = "--preset", required = true, description = "llama-tiny, llama-110m, llama-1b, exaone-tiny, ernie4_5-tiny, xverse-tiny, internlm2-tiny, smollm2-tiny, smollm3-tiny, exaone4-tiny, exaone4-swa-tiny, glm4-tiny, arcee-tiny, seed_oss-tiny, phi3-tiny, qwen2-tiny, qwen3-tiny, granite-tiny, olmo2-tiny, olmo3-tiny, gemma-tiny, gemma2-tiny, gemma3-tiny, stablelm-tiny, starcoder2-tiny, gptneox-tiny, gpt2-tiny, command-r-tiny, phi2-tiny, mixtral-tiny, qwen2moe-tiny, olmoe-tiny, granitemoe-tiny, qwen3moe-tiny, qwen3moe-small, dsv4-tiny, dsv4-small")
    String preset;

    @Option(names = "--quant", defaultValue = "Q4_0",
            description = "F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K Q8_K IQ4_NL IQ4_XS Q3_K_M Q4_K_M Q5_K_M (default ${DEFAULT-VALUE})")
    String quant;

    @Option(names = "--seed", defaultValue = "42", description = "weight seed (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = {"-o", "--output"}, required = true, description = "output GGUF file")
    Path output;

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
