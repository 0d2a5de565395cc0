package dgr.engine.llama;

import dgr.engine.Batch;
import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.gguf.GgmlType;
import dgr.gguf.GgufWriter;
import dgr.gguf.MetaValue;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Decode throughput of the llama engine, measured by hand (not a test: timings are not asserted).
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -cp ... dgr.engine.llama.DecodeBench [model.gguf|--synth-1b] [threads] [steps] [simd|scalar]
 * </pre>
 * {@code --synth-1b} writes (once) a random Q4_0 model of the llama-3.2-1B shape to /tmp. Prints
 * batch-1 decode tok/s, aggregate tok/s at B = 1, 2, 4, 8, 16, and the GC count over 512 tokens
 * of steady-state decode (which should not move: the hot path allocates nothing).
 */
public final class DecodeBench {
    private DecodeBench() {}

    public static void main(String[] args) throws Exception {
        Path model = args.length > 0 && !args[0].equals("--synth-1b") ? Path.of(args[0]) : synth1b(Path.of("/tmp/dgr-synth-llama-1b-Q4_0.gguf"));
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int steps = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        EngineOptions.Kind kind = args.length > 3 && args[3].equals("scalar") ? EngineOptions.Kind.SCALAR : EngineOptions.Kind.SIMD;
        EngineOptions o = EngineOptions.defaults().withKind(kind).withThreads(threads).withMaxRows(16).withContextLength(1024);
        try (Engine e = Engines.load(model, o)) {
            System.out.printf("model %s, engine %s, threads %d, %d layers, n_embd %d, vocab %d%n", model, e.id(), threads,
                    e.info().nLayers(), e.info().nEmbd(), e.info().vocabSize());
            decode(e, 1, 8); // warm-up: JIT compiles the kernels
            for (int b : new int[] {1, 2, 4, 8, 16}) {
                double tps = decode(e, b, steps);
                System.out.printf("B=%2d  aggregate %.2f tok/s  (%.2f tok/s per session)%n", b, tps, tps / b);
            }
            // Steady state: sessions that reuse pooled K/V pages, 512 tokens at B=8.
            decode(e, 8, 64);
            long gc0 = gcCount();
            double tps = decode(e, 8, 64);
            long gc1 = gcCount();
            System.out.printf("steady state B=8, 512 tokens: %.2f tok/s, GC collections %d -> %d%n", tps, gc0, gc1);
        }
    }

    /** Opens {@code b} sessions, prefills 4 tokens each, then decodes {@code steps} rows per session; returns tok/s. */
    static double decode(Engine e, int b, int steps) {
        StateSlot[] slots = new StateSlot[b];
        int[] next = new int[b];
        Batch batch = new Batch(e.features().maxRows(), e.boundarySchema().rowWidth());
        for (int s = 0; s < b; s++) {
            slots[s] = e.openSlot();
            batch.clear();
            for (int p = 0; p < 4; p++) batch.addToken(slots[s], p, 100 + 7 * s + p, p == 3);
            ForwardResult r = e.forward(batch);
            next[s] = argmax(r.outputArray(), r.outputOffset(3), r.outputWidth());
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < steps; i++) {
            batch.clear();
            for (int s = 0; s < b; s++) batch.addToken(slots[s], slots[s].length(), next[s], true);
            ForwardResult r = e.forward(batch);
            for (int s = 0; s < b; s++) next[s] = argmax(r.outputArray(), r.outputOffset(s), r.outputWidth());
        }
        long t1 = System.nanoTime();
        for (StateSlot s : slots) s.close();
        return (double) b * steps / ((t1 - t0) / 1e9);
    }

    static int argmax(float[] a, int off, int n) {
        int best = 0;
        for (int i = 1; i < n; i++) if (a[off + i] > a[off + best]) best = i;
        return best;
    }

    static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) n += Math.max(0, b.getCollectionCount());
        return n;
    }

    /** Random Q4_0 weights in the llama-3.2-1B shape (tied embeddings), scale ≈ 0.02/8. */
    static Path synth1b(Path out) {
        if (Files.exists(out)) return out;
        int e = 2048, layers = 16, ff = 8192, heads = 32, kv = 8, vocab = 128256, hd = 64;
        GgufWriter w = new GgufWriter()
                .put("general.architecture", MetaValue.of("llama"))
                .put("general.name", MetaValue.of("synthetic llama-1b Q4_0"))
                .put("llama.embedding_length", MetaValue.u32(e))
                .put("llama.block_count", MetaValue.u32(layers))
                .put("llama.feed_forward_length", MetaValue.u32(ff))
                .put("llama.attention.head_count", MetaValue.u32(heads))
                .put("llama.attention.head_count_kv", MetaValue.u32(kv))
                .put("llama.attention.layer_norm_rms_epsilon", MetaValue.f32(1e-5f))
                .put("llama.rope.freq_base", MetaValue.f32(500000f))
                .put("llama.rope.dimension_count", MetaValue.u32(hd))
                .put("llama.context_length", MetaValue.u32(4096))
                .put("llama.vocab_size", MetaValue.u32(vocab));
        SplittableRandom rnd = new SplittableRandom(1);
        w.tensor("token_embd.weight", GgmlType.Q4_0, new long[] {e, vocab}, sink -> q4(sink, (long) e * vocab, rnd));
        w.tensor("output_norm.weight", GgmlType.F32, new long[] {e}, ones(e));
        for (int l = 0; l < layers; l++) {
            String p = "blk." + l + ".";
            w.tensor(p + "attn_norm.weight", GgmlType.F32, new long[] {e}, ones(e));
            w.tensor(p + "ffn_norm.weight", GgmlType.F32, new long[] {e}, ones(e));
            long[][] shapes = {{e, e}, {e, kv * hd}, {e, kv * hd}, {e, e}, {e, ff}, {e, ff}, {ff, e}};
            String[] names = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
            for (int i = 0; i < names.length; i++) {
                long n = shapes[i][0] * shapes[i][1];
                w.tensor(p + names[i] + ".weight", GgmlType.Q4_0, shapes[i], sink -> q4(sink, n, rnd));
            }
        }
        System.out.println("writing " + out);
        w.write(out);
        return out;
    }

    private static byte[] ones(int n) {
        ByteBuffer b = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) b.putFloat(1f);
        return b.array();
    }

    private static void q4(GgufWriter.ByteSink sink, long values, SplittableRandom rnd) throws java.io.IOException {
        ByteBuffer buf = ByteBuffer.allocate(18 * 4096).order(ByteOrder.LITTLE_ENDIAN);
        short d = Float.floatToFloat16(0.02f / 8);
        for (long blocks = values / 32; blocks > 0; ) {
            int nb = (int) Math.min(4096, blocks);
            buf.clear();
            for (int b = 0; b < nb; b++) {
                buf.putShort(d);
                buf.putLong(rnd.nextLong());
                buf.putLong(rnd.nextLong());
            }
            buf.flip();
            sink.put(buf);
            blocks -= nb;
        }
    }
}
