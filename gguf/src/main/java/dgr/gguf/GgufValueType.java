package dgr.gguf;

/** GGUF metadata value types, with their on-disk ids. */
public enum GgufValueType {
    UINT8(0, 1), INT8(1, 1), UINT16(2, 2), INT16(3, 2), UINT32(4, 4), INT32(5, 4),
    FLOAT32(6, 4), BOOL(7, 1), STRING(8, -1), ARRAY(9, -1), UINT64(10, 8), INT64(11, 8), FLOAT64(12, 8);

    public final int id;
    /** Fixed size in bytes, or -1 for variable-size values. */
    public final int size;

    GgufValueType(int id, int size) {
        this.id = id;
        this.size = size;
    }

    public static GgufValueType byId(int id, String key) {
        for (GgufValueType t : values()) if (t.id == id) return t;
        throw new GgufFormatException("metadata key '" + key + "' has unknown value type id " + id);
    }
}
