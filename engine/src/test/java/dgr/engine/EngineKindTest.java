package dgr.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.kernel.Q8Kernels;
import org.junit.jupiter.api.Test;

/** {@code --engine} values, the default, and what {@code auto} resolves to here. */
class EngineKindTest {
    @Test
    void flagsNameTheKindsAndAnythingElseIsRefusedWithTheList() {
        assertThat(EngineOptions.Kind.ofFlag("auto")).isEqualTo(EngineOptions.Kind.AUTO);
        assertThat(EngineOptions.Kind.ofFlag("simd")).isEqualTo(EngineOptions.Kind.SIMD);
        assertThat(EngineOptions.Kind.ofFlag("q8")).isEqualTo(EngineOptions.Kind.Q8);
        assertThat(EngineOptions.Kind.ofFlag("scalar")).isEqualTo(EngineOptions.Kind.SCALAR);
        assertThatThrownBy(() -> EngineOptions.Kind.ofFlag("fast"))
                .hasMessage("--engine must be auto, simd, q8 or scalar, not 'fast'");
        assertThat(EngineOptions.defaults().kind()).isEqualTo(EngineOptions.Kind.AUTO);
    }

    @Test
    void autoPrefersJavaQ8ExactlyWhereItsNativeKernelRuns() {
        assertThat(EngineOptions.Kind.preferred())
                .isEqualTo(Q8Kernels.nativeKernel() ? EngineOptions.Kind.Q8 : EngineOptions.Kind.SIMD);
    }
}
