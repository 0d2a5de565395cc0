package dgr.engine.deepseek4;

import dgr.engine.EngineOptions;
import java.nio.file.Path;

/** Batch invariance of java-q8 on dsv4-tiny Q8_0: every quantised matrix with 256-wide rows on the 8-bit kernels. */
class Dsv4Q8BatchInvarianceTest extends Dsv4BatchInvariance {
    @Override
    Path makeModel() {
        return synth("Q8_0");
    }

    @Override
    EngineOptions.Kind kind() {
        return EngineOptions.Kind.Q8;
    }
}
