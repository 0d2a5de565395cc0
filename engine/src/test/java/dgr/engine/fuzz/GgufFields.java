package dgr.engine.fuzz;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Where each field of a valid GGUF file's header sits: the header counts, each metadata key's
 * length, type and value, each tensor-info entry's dimensions, type and offset. The fuzzer aims its
 * mutations at these (a mutated {@code block_count} or tensor offset says more than a random byte).
 * Array elements are not listed one by one: the array's type and length are, and a few elements.
 */
record GgufFields(List<Field> fields, int headerEnd) {

    enum Kind { VERSION, COUNT, KEY_LENGTH, VALUE_TYPE, INT_VALUE, FLOAT_VALUE, STRING_LENGTH, ARRAY_TYPE, ARRAY_LENGTH,
        NAME_LENGTH, N_DIMS, DIM, TENSOR_TYPE, TENSOR_OFFSET }

    /** One field: its byte position and width, and what it means ({@code owner}: the key or tensor). */
    record Field(Kind kind, int pos, int width, String owner) {}

    static GgufFields of(byte[] file) {
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        List<Field> out = new ArrayList<>();
        b.position(4);
        out.add(new Field(Kind.VERSION, 4, 4, "version"));
        b.getInt();
        out.add(new Field(Kind.COUNT, 8, 8, "tensor count"));
        long nTensors = b.getLong();
        out.add(new Field(Kind.COUNT, 16, 8, "metadata count"));
        long nKv = b.getLong();
        for (long i = 0; i < nKv; i++) {
            out.add(new Field(Kind.KEY_LENGTH, b.position(), 8, "key #" + i));
            String key = string(b);
            out.add(new Field(Kind.VALUE_TYPE, b.position(), 4, key));
            int type = b.getInt();
            value(b, type, key, out, true);
        }
        for (long i = 0; i < nTensors; i++) {
            out.add(new Field(Kind.NAME_LENGTH, b.position(), 8, "tensor #" + i));
            String name = string(b);
            out.add(new Field(Kind.N_DIMS, b.position(), 4, name));
            int nDims = b.getInt();
            for (int d = 0; d < nDims; d++) {
                out.add(new Field(Kind.DIM, b.position(), 8, name));
                b.getLong();
            }
            out.add(new Field(Kind.TENSOR_TYPE, b.position(), 4, name));
            b.getInt();
            out.add(new Field(Kind.TENSOR_OFFSET, b.position(), 8, name));
            b.getLong();
        }
        return new GgufFields(List.copyOf(out), b.position());
    }

    private static String string(ByteBuffer b) {
        int len = (int) b.getLong();
        byte[] s = new byte[len];
        b.get(s);
        return new String(s, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static void value(ByteBuffer b, int type, String key, List<Field> out, boolean list) {
        int pos = b.position();
        switch (type) {
            case 0, 1, 7 -> { b.get(); add(out, list, Kind.INT_VALUE, pos, 1, key); }
            case 2, 3 -> { b.getShort(); add(out, list, Kind.INT_VALUE, pos, 2, key); }
            case 4, 5 -> { b.getInt(); add(out, list, Kind.INT_VALUE, pos, 4, key); }
            case 6 -> { b.getFloat(); add(out, list, Kind.FLOAT_VALUE, pos, 4, key); }
            case 10, 11 -> { b.getLong(); add(out, list, Kind.INT_VALUE, pos, 8, key); }
            case 12 -> { b.getDouble(); add(out, list, Kind.FLOAT_VALUE, pos, 8, key); }
            case 8 -> { add(out, list, Kind.STRING_LENGTH, pos, 8, key); string(b); }
            case 9 -> {
                add(out, list, Kind.ARRAY_TYPE, pos, 4, key);
                int et = b.getInt();
                add(out, list, Kind.ARRAY_LENGTH, b.position(), 8, key);
                long n = b.getLong();
                for (long i = 0; i < n; i++) value(b, et, key, out, list && i < 3);
            }
            default -> throw new IllegalArgumentException("value type " + type + " of " + key);
        }
    }

    private static void add(List<Field> out, boolean list, Kind kind, int pos, int width, String key) {
        if (list) out.add(new Field(kind, pos, width, key));
    }
}
