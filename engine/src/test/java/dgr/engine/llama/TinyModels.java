package dgr.engine.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.gguf.synth.QuantMix;
import dgr.gguf.synth.Synth;
import dgr.gguf.synth.SynthPreset;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/** The llama-tiny conformance fixtures copied into test resources, and small driving helpers. */
final class TinyModels {
    /** Every engine kind a test runs, AUTO left out (it is one of the others). */
    static final EngineOptions.Kind[] KINDS = {EngineOptions.Kind.SIMD, EngineOptions.Kind.SCALAR, EngineOptions.Kind.Q8};

    static final String[] TYPES = {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K_M", "Q4_K_M",
            "Q5_K_M", "Q6_K"};

    static {
        // Keep the sha256 sidecar cache out of the developer's home during tests.
        try {
            System.setProperty("dgr.cache.dir", Files.createTempDirectory("dgr-test-cache").toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private TinyModels() {}

    /**
     * A llama-tiny fixture of {@code type}; {@code IQ4_*}, which the fixtures lack, synthesized; and
     * {@code NAME-TYPE} (e.g. {@code mixtral-Q4_0}, {@code command-r-Q4_0}: the type after the last
     * dash) the {@code NAME-tiny} preset synthesized in that type.
     */
    static Path model(String type) {
        if (type.startsWith("IQ")) return synthesized(type);
        int dash = type.lastIndexOf('-');
        if (dash > 0) return synthesized(SynthPreset.byName(type.substring(0, dash) + "-tiny"), type.substring(dash + 1));
        return resource("llama-tiny-" + type + ".gguf");
    }

    /**
     * The shared fixtures have no IQ files: {@code dgr synth --preset llama-tiny --quant TYPE
     * --seed 7}, written once per test JVM ({@link Iq4CrossCheckTest} holds llama.cpp's view of them).
     */
    static Path synthesized(String type) {
        return synthesized(SynthPreset.LLAMA_TINY, type);
    }

    /** {@code dgr synth --preset PRESET --quant TYPE --seed 7}, written once per test JVM. */
    static synchronized Path synthesized(SynthPreset preset, String type) {
        try {
            if (synthDir == null) synthDir = Files.createTempDirectory("dgr-tiny-models");
            Path p = synthDir.resolve(preset.name() + "-" + type + ".gguf");
            if (!Files.exists(p)) Synth.write(preset, QuantMix.parse(type), 7, p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path synthDir;

    static Path resource(String name) {
        try {
            return Path.of(TinyModels.class.getResource("/conformance/models/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode ref(String type) throws IOException {
        return new ObjectMapper().readTree(resource("llama-tiny-" + type + ".ref.json").toFile());
    }

    static float[] refLogits(String type) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(resource("llama-tiny-" + type + ".ref.f32")))
                .order(ByteOrder.LITTLE_ENDIAN);
        float[] f = new float[b.remaining() / 4];
        b.asFloatBuffer().get(f);
        return f;
    }

    static Engine load(String type, EngineOptions.Kind kind, int threads, int maxRows) {
        return load(type, kind, threads, maxRows, dgr.engine.KvCacheTypes.F32);
    }

    /** {@link #load} with K and V stored as {@code cache} ({@code --cache-type-k/-v}). */
    static Engine load(String type, EngineOptions.Kind kind, int threads, int maxRows, dgr.engine.KvCacheTypes cache) {
        return Engines.load(model(type), EngineOptions.defaults().withKind(kind).withThreads(threads).withMaxRows(maxRows)
                .withCacheTypes(cache));
    }

    /** Cache types written {@code f16} (K and V) or {@code q8_0/f16} (K, V). */
    static dgr.engine.KvCacheTypes cache(String s) {
        String[] kv = s.split("/");
        dgr.engine.KvCacheType k = dgr.engine.KvCacheType.ofFlag("--cache-type-k", kv[0]);
        return new dgr.engine.KvCacheTypes(k, kv.length == 1 ? k : dgr.engine.KvCacheType.ofFlag("--cache-type-v", kv[1]));
    }

    /**
     * Writes {@code dst} from {@code src}: every metadata key (renamed by {@code key}), every tensor
     * through {@code tensors} (which may copy, reshape, split or drop it), then {@code edit}'s additions.
     */
    static void rewrite(Path src, Path dst, java.util.function.UnaryOperator<String> key, TensorRewrite tensors,
                        java.util.function.Consumer<dgr.gguf.GgufWriter> edit) {
        try (dgr.gguf.GgufFile f = dgr.gguf.GgufFile.open(src)) {
            dgr.gguf.GgufWriter w = new dgr.gguf.GgufWriter();
            f.metadata().asMap().forEach((k, v) -> { if (!k.startsWith("GGUF.")) w.put(key.apply(k), v); });
            for (dgr.gguf.TensorInfo t : f.tensors()) tensors.write(t, w);
            edit.accept(w);
            w.write(dst);
        }
    }

    /** How {@link #rewrite} writes one tensor of the source. */
    @FunctionalInterface
    interface TensorRewrite {
        void write(dgr.gguf.TensorInfo t, dgr.gguf.GgufWriter w);
    }

    /** The tensor as it is. */
    static void copy(dgr.gguf.TensorInfo t, dgr.gguf.GgufWriter w) {
        w.tensor(t.name(), t.type(), t.shape(), sink -> sink.put(t.data().asByteBuffer()));
    }

    /** Feeds tokens to one slot as one batch, every row asking for output; returns the result. */
    static ForwardResult prefill(Engine e, StateSlot slot, int[] tokens) {
        Batch b = new Batch(tokens.length, e.boundarySchema().rowWidth());
        for (int i = 0; i < tokens.length; i++) b.addToken(slot, slot.length() + i, tokens[i], true);
        return e.forward(b);
    }

    /** Argmax, lowest id on ties. */
    static int argmax(float[] a, int off, int n) {
        int best = 0;
        for (int i = 1; i < n; i++) if (a[off + i] > a[off + best]) best = i;
        return best;
    }
}
