package dgr.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes GGUF bytes field by field, so a test can build exactly the malformed header it means
 * (a count of 2^60, a string length of 2^62, a tensor pointing past the end) without a writer
 * that would refuse to produce it.
 */
final class RawGguf {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** Magic, version 3 and the two counts. */
    static RawGguf header(long nTensors, long nKv) {
        return new RawGguf().u32(GgufFile.MAGIC).u32(3).u64(nTensors).u64(nKv);
    }

    RawGguf u8(int v) { out.write(v); return this; }

    RawGguf u32(int v) { return put(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v)); }

    RawGguf u64(long v) { return put(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v)); }

    RawGguf str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        u64(b.length);
        out.writeBytes(b);
        return this;
    }

    /** A key with a uint32 value. */
    RawGguf kvU32(String key, int v) { return str(key).u32(GgufValueType.UINT32.id).u32(v); }

    /** A tensor-info entry. */
    RawGguf tensor(String name, int typeId, long offset, long... shape) {
        str(name).u32(shape.length);
        for (long d : shape) u64(d);
        return u32(typeId).u64(offset);
    }

    RawGguf padTo(int alignment) {
        while (out.size() % alignment != 0) out.write(0);
        return this;
    }

    RawGguf zeros(int n) {
        out.writeBytes(new byte[n]);
        return this;
    }

    int size() { return out.size(); }

    byte[] bytes() { return out.toByteArray(); }

    Path writeTo(Path file) {
        try {
            return Files.write(file, out.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private RawGguf put(ByteBuffer b) {
        out.writeBytes(b.array());
        return this;
    }
}
