package dgr.engine;

/**
 * An executor implementation and its version, written {@code name/version} (e.g. {@code java-simd/4}).
 * The version is one number for every engine dgr builds ({@link #VERSION}): it changes whenever any
 * kernel's bits change, so saturation files and compatibility keys of older builds are never taken
 * for this build's.
 */
public record EngineId(String name, int version) {
    /**
     * The version of dgr's kernels' bits. 5: java-q8's Q6_K over activations rounded per 256 values, a super-block's
     * sums in integers and one float step per super-block; 4: the llama family's SiLU in float on dgr's own exp
     * (eight lanes at a time) instead of {@code Math.exp} in double; 3: DeepSeek-V4 on the llama family's kernels (java-q8,
     * batched experts, vectorised attention and compressor) changed V4's bits; 2: tiled attention
     * (online softmax over 64-position tiles) changed the llama family's attention sums; 1 before.
     */
    public static final int VERSION = 5;

    public static final EngineId JAVA_SIMD = of("java-simd");
    public static final EngineId JAVA_SCALAR = of("java-scalar");

    /** The engine {@code name} at this build's {@link #VERSION}. */
    public static EngineId of(String name) {
        return new EngineId(name, VERSION);
    }

    @Override
    public String toString() {
        return name + "/" + version;
    }
}
