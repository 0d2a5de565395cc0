package dgr.gguf;

import java.util.List;

/**
 * One metadata value with its exact GGUF type, so a file can be rewritten byte for byte.
 * Scalars hold boxed Java values (unsigned types are widened: UINT8/16 as Integer, UINT32 as Long,
 * UINT64 as Long bits); strings hold String; arrays hold {@link MetaArray}.
 */
public record MetaValue(GgufValueType type, Object value) {
    public MetaValue {
        if (type == GgufValueType.ARRAY && !(value instanceof MetaArray)) {
            throw new IllegalArgumentException("ARRAY value must be a MetaArray");
        }
    }

    /** An array: element type plus the elements (nested arrays are MetaArray elements). */
    public record MetaArray(GgufValueType elementType, List<Object> elements) {}

    public static MetaValue of(String s) { return new MetaValue(GgufValueType.STRING, s); }
    public static MetaValue u32(long v) { return new MetaValue(GgufValueType.UINT32, v); }
    public static MetaValue i32(int v) { return new MetaValue(GgufValueType.INT32, v); }
    public static MetaValue f32(float v) { return new MetaValue(GgufValueType.FLOAT32, v); }
    public static MetaValue bool(boolean v) { return new MetaValue(GgufValueType.BOOL, v); }
    public static MetaValue u64(long v) { return new MetaValue(GgufValueType.UINT64, v); }
    public static MetaValue array(GgufValueType elem, List<?> values) {
        return new MetaValue(GgufValueType.ARRAY, new MetaArray(elem, List.copyOf(values)));
    }

    /** Numeric value as long (any integer type, or bool as 0/1). */
    public long asLong() {
        return switch (value) {
            case Number n -> n.longValue();
            case Boolean b -> b ? 1 : 0;
            default -> throw new GgufFormatException("expected a number, found " + type);
        };
    }

    public double asDouble() {
        if (value instanceof Number n) return n.doubleValue();
        throw new GgufFormatException("expected a number, found " + type);
    }

    public String asString() {
        if (value instanceof String s) return s;
        throw new GgufFormatException("expected a string, found " + type);
    }

    public MetaArray asArray() {
        if (value instanceof MetaArray a) return a;
        throw new GgufFormatException("expected an array, found " + type);
    }
}
