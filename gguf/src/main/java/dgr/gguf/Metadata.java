package dgr.gguf;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** GGUF key/value metadata in file order, with typed getters that name the missing or mistyped key. */
public final class Metadata {
    private final Map<String, MetaValue> values;

    public Metadata(Map<String, MetaValue> values) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    public Map<String, MetaValue> asMap() { return values; }

    public boolean has(String key) { return values.containsKey(key); }

    public Optional<MetaValue> get(String key) { return Optional.ofNullable(values.get(key)); }

    private MetaValue require(String key) {
        MetaValue v = values.get(key);
        if (v == null) throw new GgufFormatException("missing metadata key '" + key + "'");
        return v;
    }

    public String getString(String key) {
        try { return require(key).asString(); } catch (GgufFormatException e) { throw wrap(key, e); }
    }

    public String getString(String key, String dflt) { return has(key) ? getString(key) : dflt; }

    public long getLong(String key) {
        try { return require(key).asLong(); } catch (GgufFormatException e) { throw wrap(key, e); }
    }

    public long getLong(String key, long dflt) { return has(key) ? getLong(key) : dflt; }

    /** The value as an int; one outside int's range is refused naming the key (never a bare overflow). */
    public int getInt(String key) {
        long v = getLong(key);
        if (v != (int) v) {
            throw new GgufFormatException("metadata key '" + key + "' = " + v + " does not fit a 32-bit integer");
        }
        return (int) v;
    }

    public int getInt(String key, int dflt) { return has(key) ? getInt(key) : dflt; }

    public double getDouble(String key) {
        try { return require(key).asDouble(); } catch (GgufFormatException e) { throw wrap(key, e); }
    }

    public float getFloat(String key, float dflt) { return has(key) ? (float) getDouble(key) : dflt; }

    public boolean getBool(String key, boolean dflt) {
        return has(key) ? require(key).asLong() != 0 : dflt;
    }

    public List<Object> getArray(String key) {
        try { return require(key).asArray().elements(); } catch (GgufFormatException e) { throw wrap(key, e); }
    }

    private static GgufFormatException wrap(String key, GgufFormatException e) {
        return e.getMessage().contains("'" + key + "'") ? e
                : new GgufFormatException("metadata key '" + key + "': " + e.getMessage(), e);
    }
}
