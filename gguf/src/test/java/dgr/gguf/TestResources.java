package dgr.gguf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/** Test fixtures: the shared conformance set copied into src/test/resources/conformance, and others beside it. */
public final class TestResources {
    private TestResources() {}

    public static byte[] bytes(String name) {
        return resource("conformance/" + name);
    }

    /** Any test resource, by its path under src/test/resources. */
    public static byte[] resource(String path) {
        try (InputStream in = TestResources.class.getResourceAsStream("/" + path)) {
            if (in == null) throw new IllegalStateException("missing test resource " + path);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Little-endian float32 values of a conformance resource. */
    public static float[] floats(String name) {
        return floats(bytes(name));
    }

    /** Little-endian float32 values. */
    public static float[] floats(byte[] b) {
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
