package dgr.engine.deepseek4;

import dgr.engine.Batch;
import dgr.engine.EngineOptions;
import dgr.engine.ForwardResult;
import dgr.engine.StateSlot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The dsv4-tiny conformance fixture (copied from shared/conformance/models) and small drivers. */
final class Dsv4Fixture {
    static final String MODEL = "/conformance/models/dsv4-tiny.gguf";

    private Dsv4Fixture() {}

    static Path resource(String name) {
        try {
            return Path.of(Dsv4Fixture.class.getResource(name).toURI());
        } catch (URISyntaxException | NullPointerException e) {
            throw new IllegalStateException("missing test resource " + name, e);
        }
    }

    static String refJson() {
        try {
            return Files.readString(resource("/conformance/models/dsv4-tiny.ref.json"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first integer array after {@code "section": {... "key": [}. */
    static int[] intArray(String json, String section, String key) {
        int s = json.indexOf("\"" + section + "\"");
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*\\[([^\\]]*)\\]").matcher(json);
        if (s < 0 || !m.find(s)) throw new IllegalStateException("no " + section + "." + key + " in ref.json");
        return Arrays.stream(m.group(1).split(",")).map(String::trim).filter(t -> !t.isEmpty()).mapToInt(Integer::parseInt).toArray();
    }

    static double number(String json, String section, String key) {
        int s = json.indexOf("\"" + section + "\"");
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*([-0-9.eE+]+)").matcher(json);
        if (s < 0 || !m.find(s)) throw new IllegalStateException("no " + section + "." + key + " in ref.json");
        return Double.parseDouble(m.group(1));
    }

    static float[] refLogits() {
        try {
            byte[] b = Files.readAllBytes(resource("/conformance/models/dsv4-tiny.ref.f32"));
            float[] f = new float[b.length / 4];
            ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static EngineOptions options(int maxRows) {
        return EngineOptions.defaults().withThreads(1).withMaxRows(maxRows).withContextLength(512);
    }

    /** Feeds tokens[from..to) to one slot in chunks of {@code chunk}, returns every position's logits. */
    static float[][] prefill(Dsv4Engine e, StateSlot slot, int[] tokens, int chunk) {
        float[][] out = new float[tokens.length][];
        Batch b = new Batch(chunk, e.boundarySchema().rowWidth());
        for (int s = 0; s < tokens.length; s += chunk) {
            b.clear();
            int end = Math.min(tokens.length, s + chunk);
            for (int p = s; p < end; p++) b.addToken(slot, slot.length() + p - s, tokens[p], true);
            ForwardResult r = e.forward(b);
            for (int p = s; p < end; p++) out[p] = r.copyOutput(p - s);
        }
        return out;
    }

    static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
        return best;
    }
}
