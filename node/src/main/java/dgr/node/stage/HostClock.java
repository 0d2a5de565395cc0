package dgr.node.stage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which monotonic clock this process's {@link System#nanoTime} reads, as one number a message can
 * carry, so a receiver can tell whether a sender's stamp is comparable with its own clock (docs/stages.md,
 * "Per-hop latency").
 *
 * <p>On Linux {@code System.nanoTime} is {@code CLOCK_MONOTONIC}: one clock for every process of one boot
 * of one kernel, unless a time namespace offsets it. The id is a hash of the boot id
 * ({@code /proc/sys/kernel/random/boot_id}, new at every boot) and the process's time namespace
 * ({@code /proc/self/ns/time}, absent before Linux 5.6, which has no such offsets): equal ids mean the
 * same clock. Elsewhere (no boot id) the id is random: a process still compares stamps of its own
 * clock (stages in one JVM), and no other process has the same id.
 */
final class HostClock {
    /** What a sender that names no clock sends (older peers: the field's default); never equal to anything. */
    static final long UNKNOWN = 0;
    /** A stamp that was not comparable (or not sent). */
    static final long NO_STAMP = Long.MIN_VALUE;
    static final long ID = read();

    private HostClock() {}

    /** Whether a stamp taken under clock {@code id} can be subtracted from this process's {@link System#nanoTime}. */
    static boolean shared(long id) { return id != UNKNOWN && id == ID; }

    /** {@code sentNanos} when it was taken under this process's clock {@code id}, else {@link #NO_STAMP}. */
    static long stamp(long id, long sentNanos) { return shared(id) ? sentNanos : NO_STAMP; }

    private static long read() {
        try {
            String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).strip();
            if (boot.isEmpty()) return ownId();
            String ns = "";
            try {
                ns = Files.readSymbolicLink(Path.of("/proc/self/ns/time")).toString();
            } catch (IOException | UnsupportedOperationException e) {
                // no time namespaces on this kernel: the boot id alone names the clock
            }
            long h = fnv(boot + "|" + ns);
            return h == UNKNOWN ? 1 : h;
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return ownId();
        }
    }

    /** A clock id no other process has (64 random bits), never {@link #UNKNOWN}. */
    private static long ownId() {
        long id = new java.security.SecureRandom().nextLong();
        return id == UNKNOWN ? 1 : id;
    }

    /** FNV-1a, 64 bits: a stable hash, the same in every JVM (String.hashCode has 32 bits only). */
    private static long fnv(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        return h;
    }
}
