package dgr.engine.deepseek4;

import dgr.engine.EngineOptions;
import java.nio.file.Path;

/** Batch invariance of java-q8 on dsv4-tiny with MXFP4 experts and Q8_0 elsewhere, as the V4 converter writes its files. */
class Dsv4Mxfp4BatchInvarianceTest extends Dsv4BatchInvariance {
    @Override
    Path makeModel() {
        return synth("MXFP4_MOE");
    }

    @Override
    EngineOptions.Kind kind() {
        return EngineOptions.Kind.Q8;
    }
}
