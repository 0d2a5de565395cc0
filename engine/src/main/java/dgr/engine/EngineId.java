package dgr.engine;

/** An executor implementation and its version, written {@code name/version} (e.g. {@code java-simd/1}). */
public record EngineId(String name, int version) {
    public static final EngineId JAVA_SIMD = new EngineId("java-simd", 1);
    public static final EngineId JAVA_SCALAR = new EngineId("java-scalar", 1);

    @Override
    public String toString() {
        return name + "/" + version;
    }
}
