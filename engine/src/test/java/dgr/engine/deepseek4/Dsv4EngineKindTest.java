package dgr.engine.deepseek4;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.Engine;
import dgr.engine.EngineOptions;
import dgr.engine.Engines;
import org.junit.jupiter.api.Test;

/** DeepSeek-V4 has no 8-bit activation kernels: the default engine is java-simd, java-q8 asked for by name is refused. */
class Dsv4EngineKindTest {
    @Test
    void autoRunsJavaSimdAndQ8IsRefusedByName() {
        var model = Dsv4Fixture.resource(Dsv4Fixture.MODEL);
        try (Engine e = Engines.load(model, Dsv4Fixture.options(8).withKind(EngineOptions.Kind.AUTO))) {
            assertThat(e.id().toString()).isEqualTo("java-simd/" + dgr.engine.EngineId.VERSION);
        }
        assertThatThrownBy(() -> Engines.load(model, Dsv4Fixture.options(8).withKind(EngineOptions.Kind.Q8)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("engine java-q8 (8-bit activations) runs llama-family models; deepseek4 runs on java-simd or java-scalar");
    }
}
