package dgr.engine.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import dgr.gguf.GgufFile;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mixtral files converted before April 2024 store each expert's gate, up and down as tensors of
 * their own ({@code blk.N.ffn_gate.E.weight}); llama.cpp's current loader refuses them. dgr reads
 * both layouts: the same expert bytes, rewritten from the 3-D tensors into one tensor per expert,
 * give the same logits to the bit.
 */
class SplitExpertsTest {
    @TempDir
    static Path dir;

    @ParameterizedTest
    @EnumSource(EngineOptions.Kind.class)
    void oneTensorPerExpertGivesTheBitsOfTheThreeDimensionalLayout(EngineOptions.Kind kind) throws Exception {
        Path merged = TinyModels.model("mixtral-Q4_0"), split = dir.resolve("mixtral-split-" + kind + ".gguf");
        TinyModels.rewrite(merged, split, k -> k, (t, w) -> {
            if (!t.name().contains("_exps.")) {
                TinyModels.copy(t, w);
                return;
            }
            long[] s = t.shape();
            long bytes = t.data().byteSize() / s[2];
            for (int e = 0; e < s[2]; e++) {
                long from = e * bytes;
                w.tensor(t.name().replace("_exps.", "." + e + "."), t.type(), new long[] {s[0], s[1]},
                        sink -> sink.put(t.data().asSlice(from, bytes).asByteBuffer()));
            }
        }, w -> {});
        try (GgufFile f = GgufFile.open(split)) {
            assertThat(f.tensorOrNull("blk.1.ffn_down.7.weight")).isNotNull();
            assertThat(f.tensorOrNull("blk.1.ffn_down_exps.weight")).isNull();
        }
        int[] prompt = {39, 695, 78, 995, 11, 352, 17, 18, 284, 74, 641};
        assertThat(logits(split, kind, prompt)).isEqualTo(logits(merged, kind, prompt));
    }

    private static float[] logits(Path model, EngineOptions.Kind kind, int[] prompt) {
        EngineOptions opts = EngineOptions.defaults().withKind(kind).withThreads(2).withMaxRows(16);
        try (Engine e = Engines.load(model, opts); StateSlot slot = e.openSlot()) {
            ForwardResult r = TinyModels.prefill(e, slot, prompt);
            return java.util.Arrays.copyOf(r.outputArray(), prompt.length * r.outputWidth());
        }
    }
}
