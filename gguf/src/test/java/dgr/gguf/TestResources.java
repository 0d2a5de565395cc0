package dgr.gguf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/** Test fixtures copied from the shared conformance set into src/test/resources/conformance. */
public final class TestResources {
    private TestResources() {}

    public static byte[] bytes(String name) {
        try (InputStream in = TestResources.class.getResourceAsStream("/conformance/" + name)) {
            if (in == null) throw new IllegalStateException("missing test resource conformance/" + name);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Little-endian float32 values. */
    public static float[] floats(String name) {
        byte[] b = bytes(name);
        float[] f = new float[b.length / 4];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
        return f;
    }

    /** Copies a resource to {@code dir} so GgufFile can map it. */
    public static Path copyTo(Path dir, String name) {
        try {
            Path p = dir.resolve(Path.of(name).getFileName().toString());
            Files.write(p, bytes(name));
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
