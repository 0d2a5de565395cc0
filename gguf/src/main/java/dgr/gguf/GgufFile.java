package dgr.gguf;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One GGUF v3 file, memory-mapped through {@code java.lang.foreign} (no copy, files larger than
 * 2 GiB fine). Every count, length and offset is checked against the file size before it is used,
 * so a corrupt file gives a {@link GgufFormatException} naming what is wrong, never an
 * OutOfMemoryError. Close it to unmap.
 */
public final class GgufFile implements AutoCloseable {
    public static final int MAGIC = 0x46554747; // "GGUF" read little-endian
    public static final int DEFAULT_ALIGNMENT = 32;
    /** Deepest array nesting we follow; real files use 1, this only stops hostile recursion. */
    private static final int MAX_ARRAY_DEPTH = 8;
    private static final int MAX_DIMS = 4; // GGML_MAX_DIMS
    /** The GGUF spec bounds keys to 2^16 − 1 bytes. */
    private static final int MAX_KEY_BYTES = 65535;
    /** llama.cpp refuses tensor names of GGML_MAX_NAME (64) bytes or more; so do we. */
    private static final int MAX_NAME_BYTES = 63;

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Arena arena;
    private final MemorySegment file;
    private final int version;
    private final Metadata metadata;
    private final List<TensorInfo> tensors;
    private final Map<String, TensorInfo> byName;
    private final long dataOffset;
    private final int alignment;
    private final List<String> layoutWarnings;

    private GgufFile(Path path, Arena arena, MemorySegment file, boolean strictLayout) {
        this.path = path;
        this.arena = arena;
        this.file = file;
        Cursor c = new Cursor(file, path);
        int magic = c.i32("magic");
        if (magic != MAGIC) {
            if (Integer.reverseBytes(magic) == MAGIC) {
                throw c.error("big-endian GGUF files are not supported (dgr reads little-endian only)");
            }
            throw c.error(String.format("bad magic 0x%08x: not a GGUF file", magic));
        }
        version = c.i32("version");
        if (version != 3) {
            if (Integer.reverseBytes(version) == 3 || Integer.reverseBytes(version) == 2) {
                throw c.error("big-endian GGUF files are not supported (dgr reads little-endian only)");
            }
            throw c.error("GGUF version " + version + " is not supported (dgr reads version 3; "
                    + "convert older files with llama.cpp's tools)");
        }
        long nTensors = c.i64("tensor count");
        long nKv = c.i64("metadata count");
        // Each tensor info takes at least 8+4+8+4+8 bytes, each KV at least 8+4+1.
        if (nTensors < 0 || nTensors > c.remaining() / 32) throw c.error("absurd tensor count " + nTensors);
        if (nKv < 0 || nKv > c.remaining() / 13) throw c.error("absurd metadata count " + nKv);

        Map<String, MetaValue> kv = new LinkedHashMap<>();
        for (long i = 0; i < nKv; i++) {
            String key = c.string("metadata key #" + i, MAX_KEY_BYTES);
            if (kv.containsKey(key)) throw c.error("duplicate metadata key '" + key + "'");
            GgufValueType t = c.valueType("type of '" + key + "'", key);
            kv.put(key, new MetaValue(t, c.value(t, key, 0)));
        }
        metadata = new Metadata(kv);
        long align = metadata.getLong("general.alignment", DEFAULT_ALIGNMENT);
        if (align <= 0 || align > (1 << 20) || Long.bitCount(align) != 1) {
            throw new GgufFormatException(path + ": general.alignment " + align + " is not a power of two");
        }
        alignment = (int) align;

        record Raw(String name, GgmlType type, long[] shape, long offset) {}
        List<Raw> raws = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (long i = 0; i < nTensors; i++) {
            String name = c.string("tensor name #" + i, MAX_NAME_BYTES);
            if (!names.add(name)) throw c.error("duplicate tensor name '" + name + "'");
            int nDims = c.i32("n_dims of '" + name + "'");
            if (nDims < 1 || nDims > MAX_DIMS) throw c.error("tensor '" + name + "' has " + nDims + " dimensions (1.." + MAX_DIMS + " allowed)");
            long[] shape = new long[nDims];
            long count = 1;
            for (int d = 0; d < nDims; d++) {
                shape[d] = c.i64("dimension of '" + name + "'");
                if (shape[d] <= 0) throw c.error("tensor '" + name + "' has dimension " + shape[d]);
                try {
                    count = Math.multiplyExact(count, shape[d]);
                } catch (ArithmeticException e) {
                    throw c.error("tensor '" + name + "' has an absurd element count");
                }
            }
            int typeId = c.i32("type of '" + name + "'");
            GgmlType type;
            try {
                type = GgmlType.byId(typeId, name);
            } catch (GgufFormatException e) {
                throw c.error(e.getMessage()); // same words, plus the file and byte position
            }
            if (shape[0] % type.blockValues != 0) {
                throw c.error("tensor '" + name + "' row length " + shape[0] + " is not a multiple of "
                        + type + "'s block size " + type.blockValues);
            }
            long offset = c.i64("offset of '" + name + "'");
            raws.add(new Raw(name, type, shape, offset));
        }
        dataOffset = alignUp(c.pos, alignment);
        long dataSize = file.byteSize() - dataOffset;
        if (nTensors > 0 && dataSize < 0) throw new GgufFormatException(path + ": truncated: tensor data section is missing");
        List<TensorInfo> list = new ArrayList<>();
        Map<String, TensorInfo> map = new LinkedHashMap<>();
        List<TensorRanges.Range> ranges = new ArrayList<>();
        for (Raw r : raws) {
            long bytes;
            try {
                bytes = r.type.bytesFor(count(r.shape));
            } catch (ArithmeticException e) {
                throw new GgufFormatException(path + ": tensor '" + r.name + "' is absurdly large");
            }
            if (r.offset < 0 || r.offset % alignment != 0) {
                throw new GgufFormatException(path + ": tensor '" + r.name + "' data offset " + r.offset
                        + " is misaligned (alignment " + alignment + ")");
            }
            if (r.offset > dataSize || bytes > dataSize - r.offset) {
                throw new GgufFormatException(path + ": tensor '" + r.name + "' data [" + r.offset + ", "
                        + (r.offset + bytes) + ") runs past the end of the file (data section holds "
                        + Math.max(0, dataSize) + " bytes; file truncated?)");
            }
            ranges.add(new TensorRanges.Range(r.name, r.offset, r.offset + bytes));
            TensorInfo ti = new TensorInfo(r.name, r.type, r.shape, r.offset,
                    file.asSlice(dataOffset + r.offset, bytes).asReadOnly());
            list.add(ti);
            map.put(r.name, ti);
        }
        if (strictLayout) TensorRanges.requireDisjoint(path, ranges);
        layoutWarnings = strictLayout ? List.of() : List.copyOf(TensorRanges.overlaps(ranges));
        tensors = Collections.unmodifiableList(list);
        byName = Collections.unmodifiableMap(map);
    }

    private static long count(long[] shape) {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    static long alignUp(long x, long a) {
        return (x + a - 1) / a * a;
    }

    /** Opens and validates one file. The caller closes it. */
    public static GgufFile open(Path path) {
        return open(path, true);
    }

    /**
     * Opens one file; with {@code strictLayout} false, tensors whose data overlap are listed in
     * {@link #layoutWarnings()} instead of refused (for {@code dgr inspect}, which shows a bad file).
     */
    public static GgufFile open(Path path, boolean strictLayout) {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            MemorySegment seg = size == 0 ? MemorySegment.ofArray(new byte[0])
                    : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            return new GgufFile(path, arena, seg, strictLayout);
        } catch (NoSuchFileException e) {
            arena.close();
            throw new GgufFormatException(path + ": no such file");
        } catch (IOException e) {
            arena.close();
            throw new GgufFormatException(path + ": cannot read: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Parses GGUF bytes already in memory (an in-process fuzzer's mutated copy), with the same checks
     * as {@link #open}; {@code label} stands for the file in messages. Closing it does nothing: the
     * caller owns {@code bytes}.
     */
    public static GgufFile parse(Path label, MemorySegment bytes) {
        return new GgufFile(label, null, bytes, true);
    }

    public Path path() { return path; }
    public int version() { return version; }
    public Metadata metadata() { return metadata; }
    public List<TensorInfo> tensors() { return tensors; }
    public int alignment() { return alignment; }
    public long dataOffset() { return dataOffset; }
    public long fileSize() { return file.byteSize(); }
    /** Layout problems an open with {@code strictLayout} false let through (tensor overlaps); empty otherwise. */
    public List<String> layoutWarnings() { return layoutWarnings; }

    public TensorInfo tensor(String name) {
        TensorInfo t = byName.get(name);
        if (t == null) throw new GgufFormatException(path + ": missing tensor '" + name + "'");
        return t;
    }

    public TensorInfo tensorOrNull(String name) { return byName.get(name); }

    @Override
    public void close() {
        if (arena != null) arena.close();
    }

    /** Bounds-checked little-endian reader over the mapped header. */
    private static final class Cursor {
        final MemorySegment seg;
        final Path path;
        /** One strict decoder for every string of the header (a vocabulary has 10^5 of them). */
        final java.nio.charset.CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        long pos;

        Cursor(MemorySegment seg, Path path) {
            this.seg = seg;
            this.path = path;
        }

        long remaining() { return seg.byteSize() - pos; }

        GgufFormatException error(String msg) {
            return new GgufFormatException(path + ": " + msg + " (at byte " + pos + ")");
        }

        void need(long n, String what) {
            if (n < 0 || n > remaining()) {
                throw error("truncated: reading " + what + " needs " + n + " bytes, " + remaining() + " left");
            }
        }

        int i32(String what) { need(4, what); int v = seg.get(I32, pos); pos += 4; return v; }
        long i64(String what) { need(8, what); long v = seg.get(I64, pos); pos += 8; return v; }

        /** A string no longer than {@code max} bytes (a key or a tensor name: bounded by the format). */
        String string(String what, int max) {
            long at = pos;
            if (remaining() >= 8 && seg.get(I64, at) > max) {
                throw error(what + " is " + seg.get(I64, at) + " bytes long; at most " + max + " allowed");
            }
            return string(what);
        }

        String string(String what) {
            // need() inlined: the message is only built on failure (a vocabulary has 10^5 strings).
            if (remaining() < 8) throw error("truncated: reading length of " + what + " needs 8 bytes, " + remaining() + " left");
            long len = seg.get(I64, pos);
            pos += 8;
            if (len < 0 || len > remaining()) throw error("absurd string length " + len + " for " + what);
            // A Java byte[] caps a single string at 2 GiB; only a corrupt multi-GiB file gets here.
            if (len > Integer.MAX_VALUE - 8) throw error("string of " + len + " bytes for " + what + " is too long");
            byte[] b = new byte[(int) len];
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, b, 0, (int) len);
            pos += len;
            if (ascii(b)) return new String(b, StandardCharsets.ISO_8859_1); // the common case, no decoder
            try {
                return utf8.reset().decode(java.nio.ByteBuffer.wrap(b)).toString();
            } catch (CharacterCodingException e) {
                // Some vocabularies hold invalid UTF-8 pieces; keep them lossily rather than reject the file.
                return new String(b, StandardCharsets.UTF_8);
            }
        }

        private static boolean ascii(byte[] b) {
            for (byte x : b) if (x < 0) return false;
            return true;
        }

        GgufValueType valueType(String what, String key) {
            int id = i32(what);
            try {
                return GgufValueType.byId(id, key);
            } catch (GgufFormatException e) {
                throw error(e.getMessage());
            }
        }

        Object value(GgufValueType t, String key, int depth) {
            return value(t, key, "value of '" + key + "'", depth);
        }

        /** {@code what} names the value in errors; built once per key, not once per array element. */
        Object value(GgufValueType t, String key, String what, int depth) {
            return switch (t) {
                case UINT8 -> { need(1, what); yield (int) (seg.get(ValueLayout.JAVA_BYTE, pos++) & 0xff); }
                case INT8 -> { need(1, what); yield seg.get(ValueLayout.JAVA_BYTE, pos++); }
                case UINT16 -> { need(2, what); int v = seg.get(I16, pos) & 0xffff; pos += 2; yield v; }
                case INT16 -> { need(2, what); short v = seg.get(I16, pos); pos += 2; yield v; }
                case UINT32 -> Integer.toUnsignedLong(i32(what));
                case INT32 -> i32(what);
                case FLOAT32 -> { need(4, what); float v = seg.get(F32, pos); pos += 4; yield v; }
                case BOOL -> {
                    need(1, what);
                    byte b = seg.get(ValueLayout.JAVA_BYTE, pos++);
                    if (b != 0 && b != 1) throw error("metadata key '" + key + "' has bool value " + b);
                    yield b == 1;
                }
                case STRING -> string(what);
                case UINT64 -> i64(what);
                case INT64 -> i64(what);
                case FLOAT64 -> { need(8, what); double v = seg.get(F64, pos); pos += 8; yield v; }
                case ARRAY -> {
                    if (depth >= MAX_ARRAY_DEPTH) throw error("metadata key '" + key + "' nests arrays too deeply");
                    GgufValueType et = valueType("array type of '" + key + "'", key);
                    long n = i64("array length of '" + key + "'");
                    long minEach = et.size > 0 ? et.size : 8; // strings and arrays need at least their 8-byte length
                    if (n < 0 || n > remaining() / minEach) throw error("absurd array length " + n + " for '" + key + "'");
                    // The length is only bounded by the file size; grow as elements really parse
                    // rather than trusting it for an up-front allocation (8 bytes per slot).
                    List<Object> els = new ArrayList<>((int) Math.min(n, 4096));
                    for (long i = 0; i < n; i++) els.add(value(et, key, what, depth + 1));
                    yield new MetaValue.MetaArray(et, Collections.unmodifiableList(els));
                }
            };
        }
    }
}
