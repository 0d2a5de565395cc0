package dgr.bench.report;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;

/** The one JSON mapper of the reports: snake_case names (vLLM's style), NaN and infinities as null. */
public final class ReportJson {
    private ReportJson() {}

    public static ObjectMapper mapper() {
        JsonSerializer<Double> finiteOrNull = new JsonSerializer<>() {
            @Override
            public void serialize(Double v, JsonGenerator g, SerializerProvider p) throws IOException {
                if (v == null || v.isNaN() || v.isInfinite()) g.writeNull();
                else g.writeNumber(v);
            }
        };
        SimpleModule m = new SimpleModule("dgr-bench");
        m.addSerializer(Double.class, finiteOrNull);
        m.addSerializer(double.class, finiteOrNull);
        return new ObjectMapper().registerModule(m).setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .enable(SerializationFeature.INDENT_OUTPUT);
    }
}
