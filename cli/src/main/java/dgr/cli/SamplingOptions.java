package dgr.cli;

import dgr.engine.sampler.SamplerConfig;
import picocli.CommandLine.Option;

/**
 * The sampling flags {@code dgr run} and {@code dgr serve} share, with the same defaults (llama.cpp's,
 * from {@link SamplerConfig}): run samples with them, serve fills every field a request leaves out.
 */
final class SamplingOptions {
    @Option(names = "--temp", defaultValue = "" + SamplerConfig.DEFAULT_TEMPERATURE,
            description = "temperature; 0 = greedy (default ${DEFAULT-VALUE})")
    float temperature;

    @Option(names = "--top-k", defaultValue = "" + SamplerConfig.DEFAULT_TOP_K, description = "top-k, 0 = off (default ${DEFAULT-VALUE})")
    int topK;

    @Option(names = "--top-p", defaultValue = "" + SamplerConfig.DEFAULT_TOP_P, description = "top-p, 1 = off (default ${DEFAULT-VALUE})")
    float topP;

    @Option(names = "--min-p", defaultValue = "" + SamplerConfig.DEFAULT_MIN_P, description = "min-p, 0 = off (default ${DEFAULT-VALUE})")
    float minP;

    @Option(names = "--repeat-penalty", defaultValue = "" + SamplerConfig.DEFAULT_REPEAT_PENALTY,
            description = "repetition penalty, 1 = off (default ${DEFAULT-VALUE})")
    float repeatPenalty;

    @Option(names = "--repeat-last-n", defaultValue = "" + SamplerConfig.DEFAULT_PENALTY_LAST_N,
            description = "recent tokens the penalties see, 0 = none (default ${DEFAULT-VALUE})")
    int repeatLastN;

    @Option(names = {"-s", "--seed"}, defaultValue = "-1", description = "sampler seed; -1 = a fresh one each time (default ${DEFAULT-VALUE})")
    long seed;

    /** The configuration the flags describe; a negative seed stays negative (the caller picks a fresh one). */
    SamplerConfig config() {
        try {
            return new SamplerConfig(temperature, topK, topP, minP, repeatPenalty, 0f, 0f, repeatLastN, seed);
        } catch (IllegalArgumentException e) {
            // SamplerConfig names the setting in its own words; say which flag.
            throw new IllegalArgumentException("sampling flags: " + e.getMessage(), e);
        }
    }
}
