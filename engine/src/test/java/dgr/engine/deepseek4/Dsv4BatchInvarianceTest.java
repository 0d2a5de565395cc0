package dgr.engine.deepseek4;

import dgr.engine.EngineOptions;
import java.nio.file.Path;

/** Batch invariance of the float32 engine on the F16 conformance model. */
class Dsv4BatchInvarianceTest extends Dsv4BatchInvariance {
    @Override
    Path makeModel() {
        return Dsv4Fixture.resource(Dsv4Fixture.MODEL);
    }

    @Override
    EngineOptions.Kind kind() {
        return EngineOptions.Kind.SIMD;
    }
}
