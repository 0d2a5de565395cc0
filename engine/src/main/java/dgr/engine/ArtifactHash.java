package dgr.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 of an artifact file, streamed through a memory mapping. Results are cached in small
 * sidecar files under {@code ~/.cache/dgr/sha256/} keyed by (absolute path, size, mtime), so a
 * multi-GiB model is hashed once rather than at every start. A cache that cannot be read or written
 * is ignored: the hash is then simply recomputed.
 */
public final class ArtifactHash {
    private static final long CHUNK = 64L << 20;

    private ArtifactHash() {}

    public static String sha256(Path file) {
        Path cacheDir = Path.of(System.getProperty("dgr.cache.dir",
                System.getProperty("user.home") + "/.cache/dgr"), "sha256");
        return sha256(file, cacheDir);
    }

    public static String sha256(Path file, Path cacheDir) {
        try {
            Path abs = file.toAbsolutePath().normalize();
            long size = Files.size(abs);
            long mtime = Files.getLastModifiedTime(abs).toMillis();
            String key = hex(digest().digest((abs + "\n" + size + "\n" + mtime).getBytes(StandardCharsets.UTF_8)));
            Path entry = cacheDir.resolve(key);
            String cached = readCache(entry);
            if (cached != null) return cached;
            String h = compute(abs, size);
            writeCache(cacheDir, entry, h);
            return h;
        } catch (IOException e) {
            throw new UncheckedIOException("hashing " + file + ": " + e.getMessage(), e);
        }
    }

    private static String compute(Path file, long size) throws IOException {
        MessageDigest md = digest();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); Arena arena = Arena.ofConfined()) {
            MemorySegment all = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            for (long off = 0; off < size; off += CHUNK) {
                md.update(all.asSlice(off, Math.min(CHUNK, size - off)).asByteBuffer());
            }
        }
        return hex(md.digest());
    }

    private static String readCache(Path entry) {
        try {
            String s = Files.readString(entry).trim();
            return s.matches("[0-9a-f]{64}") ? s : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static void writeCache(Path dir, Path entry, String h) {
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "sha", ".tmp");
            Files.writeString(tmp, h + "\n");
            Files.move(tmp, entry, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | UnsupportedOperationException e) {
            // A read-only home is fine: the next start hashes again.
        }
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
