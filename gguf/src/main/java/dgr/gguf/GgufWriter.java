package dgr.gguf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes a GGUF v3 file: metadata in insertion order, then the tensor table, then each tensor's
 * bytes at an aligned offset. Tensor bytes are produced by a {@link TensorSource} one tensor at a
 * time while writing, so a multi-GiB model never has to sit in memory. The file is written to a
 * temporary name and moved into place, so a failed write leaves nothing half-written behind.
 */
public final class GgufWriter {
    /** Produces one tensor's bytes, exactly {@code type.bytesFor(elements)} of them, into {@code out}. */
    @FunctionalInterface
    public interface TensorSource {
        void write(ByteSink out) throws IOException;
    }

    /** Receives tensor bytes in order. */
    public interface ByteSink {
        void put(ByteBuffer bytes) throws IOException;

        default void put(byte[] bytes) throws IOException { put(ByteBuffer.wrap(bytes)); }
    }

    private record Pending(String name, GgmlType type, long[] shape, TensorSource source) {}

    private final Map<String, MetaValue> metadata = new LinkedHashMap<>();
    private final List<Pending> tensors = new ArrayList<>();
    private final Set<String> tensorNames = new HashSet<>();
    private int alignment = GgufFile.DEFAULT_ALIGNMENT;

    public GgufWriter put(String key, MetaValue value) {
        if (key.equals("general.alignment")) {
            long a = value.asLong();
            // Refuse here what every reader (ours and llama.cpp's) would refuse, instead of
            // writing a file nobody can open (or dividing by zero while padding).
            if (a <= 0 || a > (1 << 20) || Long.bitCount(a) != 1) {
                throw new IllegalArgumentException("general.alignment must be a power of two up to 2^20, got " + a);
            }
            alignment = (int) a;
        }
        metadata.put(key, value);
        return this;
    }

    public GgufWriter putAll(Map<String, MetaValue> values) {
        values.forEach(this::put);
        return this;
    }

    public GgufWriter tensor(String name, GgmlType type, long[] shape, TensorSource source) {
        if (!tensorNames.add(name)) throw new IllegalArgumentException("tensor '" + name + "' added twice");
        tensors.add(new Pending(name, type, shape.clone(), source));
        return this;
    }

    /** Adds a tensor whose bytes are already in memory. */
    public GgufWriter tensor(String name, GgmlType type, long[] shape, byte[] bytes) {
        return tensor(name, type, shape, out -> out.put(bytes));
    }

    public void write(Path path) {
        Path tmp = path.resolveSibling(path.getFileName() + "." + ProcessHandle.current().pid() + "." + Thread.currentThread().threadId() + ".tmp");
        try {
            if (path.getParent() != null) Files.createDirectories(path.getParent());
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE)) {
                writeTo(ch);
            }
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try { Files.deleteIfExists(tmp); } catch (IOException ignored) { }
            throw new UncheckedIOException("writing " + path + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            try { Files.deleteIfExists(tmp); } catch (IOException ignored) { }
            throw e;
        }
    }

    private void writeTo(FileChannel ch) throws IOException {
        Out out = new Out(ch);
        out.i32(GgufFile.MAGIC);
        out.i32(3);
        out.i64(tensors.size());
        out.i64(metadata.size());
        for (var e : metadata.entrySet()) {
            out.str(e.getKey());
            out.i32(e.getValue().type().id);
            out.value(e.getValue().type(), e.getValue().value());
        }
        long offset = 0;
        long[] sizes = new long[tensors.size()];
        for (int i = 0; i < tensors.size(); i++) {
            Pending t = tensors.get(i);
            out.str(t.name);
            out.i32(t.shape.length);
            long n = 1;
            for (long d : t.shape) { out.i64(d); n = Math.multiplyExact(n, d); }
            out.i32(t.type.id);
            out.i64(offset);
            sizes[i] = t.type.bytesFor(n);
            offset = GgufFile.alignUp(offset + sizes[i], alignment);
        }
        // A file without tensors has no data section to align (llama.cpp's vocab-only files end
        // right after the metadata), so only pad when tensor data follows.
        if (!tensors.isEmpty()) out.pad(alignment);
        for (int i = 0; i < tensors.size(); i++) {
            Pending t = tensors.get(i);
            long before = out.written;
            t.source.write(out::raw);
            long got = out.written - before;
            if (got != sizes[i]) {
                throw new IllegalStateException("tensor '" + t.name + "' produced " + got + " bytes, expected " + sizes[i]);
            }
            out.pad(alignment);
        }
        out.flush();
    }

    /** Buffered little-endian channel writer. */
    private static final class Out {
        final FileChannel ch;
        final ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        long written;

        Out(FileChannel ch) { this.ch = ch; }

        void ensure(int n) throws IOException { if (buf.remaining() < n) flush(); }

        void flush() throws IOException {
            buf.flip();
            while (buf.hasRemaining()) ch.write(buf);
            buf.clear();
        }

        void i8(int v) throws IOException { ensure(1); buf.put((byte) v); written += 1; }
        void i16(int v) throws IOException { ensure(2); buf.putShort((short) v); written += 2; }
        void i32(int v) throws IOException { ensure(4); buf.putInt(v); written += 4; }
        void i64(long v) throws IOException { ensure(8); buf.putLong(v); written += 8; }

        void str(String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i64(b.length);
            raw(ByteBuffer.wrap(b));
        }

        void raw(ByteBuffer b) throws IOException {
            int n = b.remaining();
            if (n > buf.capacity() / 2) {
                flush();
                while (b.hasRemaining()) ch.write(b);
            } else {
                ensure(n);
                buf.put(b);
            }
            written += n;
        }

        void pad(int alignment) throws IOException {
            while (written % alignment != 0) i8(0);
        }

        void value(GgufValueType t, Object v) throws IOException {
            switch (t) {
                case UINT8, INT8 -> i8(((Number) v).intValue());
                case UINT16, INT16 -> i16(((Number) v).intValue());
                case UINT32, INT32 -> i32((int) ((Number) v).longValue());
                case FLOAT32 -> i32(Float.floatToRawIntBits(((Number) v).floatValue()));
                case BOOL -> i8(((Boolean) v) ? 1 : 0);
                case STRING -> str((String) v);
                case UINT64, INT64 -> i64(((Number) v).longValue());
                case FLOAT64 -> i64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
                case ARRAY -> {
                    MetaValue.MetaArray a = (MetaValue.MetaArray) v;
                    i32(a.elementType().id);
                    i64(a.elements().size());
                    for (Object e : a.elements()) value(a.elementType(), e);
                }
            }
        }
    }
}
