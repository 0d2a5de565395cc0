import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * Decoding samples for the IQ1/IQ2/IQ3 types, made by ggml itself: 8 rows of 256 values per type,
 * raw blocks in TYPE.bin and what ggml's dequantize_row_* makes of them in TYPE.f32 (little-endian
 * float32). Rows 0–3 are random bytes (every grid index, sign pattern and scale code turns up) with a
 * chosen f16 scale (a negative one, a zero one and a subnormal one among them); rows 4–7 are
 * Gaussian data quantized by ggml_quantize_chunk (unit importance weights, which the IQ1/IQ2 types
 * require).
 *
 *   java --enable-native-access=ALL-UNNAMED tools/iq-grids/IqVectors.java [libggml-base.so] [out dir]
 */
public class IqVectors {
    record T(String name, int id, int bytes, int dOffset) {}

    static final T[] TYPES = {
        new T("IQ2_XXS", 16, 66, 0), new T("IQ2_XS", 17, 74, 0), new T("IQ2_S", 22, 82, 0),
        new T("IQ3_XXS", 18, 98, 0), new T("IQ3_S", 21, 110, 0), new T("IQ1_S", 19, 50, 0), new T("IQ1_M", 29, 56, -1)};

    public static void main(String[] args) throws Throwable {
        Path lib = Path.of(args.length > 0 ? args[0] : "tools/llamacpp/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so");
        Path out = Path.of(args.length > 1 ? args[1] : "gguf/src/test/resources/ggml");
        Files.createDirectories(out);
        Linker linker = Linker.nativeLinker();
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup ggml = SymbolLookup.libraryLookup(lib, arena);
            MethodHandle chunk = linker.downcallHandle(ggml.find("ggml_quantize_chunk").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
            for (T t : TYPES) {
                MethodHandle deq = linker.downcallHandle(ggml.find("dequantize_row_" + t.name.toLowerCase()).orElseThrow(),
                        FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                SplittableRandom rnd = new SplittableRandom(t.id);
                MemorySegment blocks = arena.allocate(8L * t.bytes, 16);
                // Rows 0-3: random bytes, then a chosen scale.
                short[] scales = {0x3c00, (short) 0xb400, 0x0000, 0x0123, 0x2e66, (short) 0xa8f5, 0x1c00, 0x3555};
                for (int b = 0; b < 4; b++) {
                    for (int i = 0; i < t.bytes; i++) blocks.set(ValueLayout.JAVA_BYTE, (long) b * t.bytes + i, (byte) rnd.nextInt(256));
                    short d = scales[2 * b + rnd.nextInt(2)];
                    if (b == 0) d = 0x3c00;
                    if (b == 1) d = (short) 0xb400;
                    if (b == 2) d = 0x0003; // subnormal
                    long o = (long) b * t.bytes;
                    if (t.dOffset >= 0) {
                        blocks.set(ValueLayout.JAVA_SHORT_UNALIGNED, o + t.dOffset, d);
                    } else {
                        // IQ1_M: the f16 scale is the top nibbles of the four 16-bit scale words at byte 48.
                        for (int k = 0; k < 4; k++) {
                            long so = o + 48 + 2L * k;
                            short w = blocks.get(ValueLayout.JAVA_SHORT_UNALIGNED, so);
                            blocks.set(ValueLayout.JAVA_SHORT_UNALIGNED, so, (short) ((w & 0x0FFF) | (((d >>> (4 * k)) & 0xF) << 12)));
                        }
                    }
                }
                // Rows 4-7: ggml's own quantizer on Gaussian rows of different sizes.
                MemorySegment src = arena.allocate(4 * 256 * 4L, 64), imatrix = arena.allocate(256 * 4L, 64);
                for (int i = 0; i < 4 * 256; i++) src.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) (rnd.nextGaussian() * Math.pow(10, (i / 256) - 2)));
                for (int i = 0; i < 256; i++) imatrix.setAtIndex(ValueLayout.JAVA_FLOAT, i, 1f);
                long n = (long) chunk.invokeExact(t.id, src, blocks.asSlice(4L * t.bytes), 0L, 4L, 256L, imatrix);
                if (n != 4L * t.bytes) throw new IllegalStateException(t.name + ": ggml wrote " + n + " bytes");
                MemorySegment y = arena.allocate(8 * 256 * 4L, 64);
                deq.invokeExact(blocks, y, 8L * 256);
                Files.write(out.resolve(t.name + ".bin"), blocks.toArray(ValueLayout.JAVA_BYTE));
                byte[] f = new byte[8 * 256 * 4];
                MemorySegment.ofArray(f).copyFrom(y);
                Files.write(out.resolve(t.name + ".f32"), f);
                System.out.println(t.name + ": " + blocks.byteSize() + " bytes, first values " + y.get(ValueLayout.JAVA_FLOAT, 0) + " " + y.get(ValueLayout.JAVA_FLOAT, 4 * 1024));
            }
        }
    }
}
