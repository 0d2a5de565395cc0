package dgr.node.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The node's accounting on disk, so that it outlives a {@code kill -9} of the node: an append-only file of
 * finished requests' records, one JSON line each, forced to the disk ({@code fsync}) before the request's
 * final chunk leaves the node. A restarted node reloads it, and a restarted tracker settles its open rows
 * from it even when the node died before the tracker could ask.
 *
 * <p>Bounded: once the file holds {@code 2 × capacity} lines it is compacted to the latest {@code capacity}
 * records (written beside it, forced, renamed over it, directory forced), so it never grows past about
 * {@code 2 × capacity} records. A line torn by a crash mid-append (only the last can be) is dropped on load;
 * the load compacts at once, so appends never follow a torn line.
 *
 * <p>Thread-safe: appends and compaction take one lock (a force is one disk flush; requests finishing
 * together queue for it).
 */
public final class AccountingJournal implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final int capacity;
    private FileChannel channel;
    private long lines;

    private AccountingJournal(Path file, int capacity) {
        this.file = file;
        this.capacity = capacity;
    }

    /**
     * Opens (creating it and its directory if needed) the journal at {@code file}, returning it with the
     * records it held, oldest first, at most {@code capacity} of them, the last record of an id winning.
     */
    public static Loaded open(Path file, int capacity) throws IOException {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1");
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) Files.createDirectories(dir);
        AccountingJournal j = new AccountingJournal(file.toAbsolutePath(), capacity);
        List<RequestRecord> records = j.read();
        j.rewrite(records);
        return new Loaded(j, records);
    }

    /** An opened journal and what it held. */
    public record Loaded(AccountingJournal journal, List<RequestRecord> records) {}

    public Path file() { return file; }

    /**
     * Appends one finished request's record and forces it to the disk before returning; compacts to
     * {@code live} (the records the node keeps, this one included) when the file is full.
     */
    public synchronized void append(RequestRecord r, java.util.function.Supplier<Collection<RequestRecord>> live) {
        try {
            if (lines >= 2L * capacity) rewrite(new ArrayList<>(live.get()));
            ByteBuffer b = ByteBuffer.wrap(line(r));
            while (b.hasRemaining()) channel.write(b);
            channel.force(false);
            lines++;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the node's accounting journal " + file + ": " + e.getMessage(), e);
        }
    }

    private List<RequestRecord> read() throws IOException {
        LinkedHashMap<String, RequestRecord> byId = new LinkedHashMap<>();
        if (!Files.exists(file)) return List.of();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            for (String l; (l = in.readLine()) != null; ) {
                RequestRecord r = parse(l);
                if (r == null) continue;   // torn by a crash mid-append
                byId.remove(r.requestId());
                byId.put(r.requestId(), r);
            }
        } catch (java.nio.charset.MalformedInputException e) {
            // A torn multi-byte character at the very end: keep what was read before it.
        }
        List<RequestRecord> all = new ArrayList<>(byId.values());
        return all.size() <= capacity ? all : new ArrayList<>(all.subList(all.size() - capacity, all.size()));
    }

    /** Replaces the file by exactly {@code records}, crash-safely, and reopens it for appending. */
    private void rewrite(List<RequestRecord> records) throws IOException {
        if (channel != null) channel.close();
        Path tmp = file.resolveSibling(file.getFileName() + ".compact");
        try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
            for (RequestRecord r : records) buf.write(line(r));
            ByteBuffer b = ByteBuffer.wrap(buf.toByteArray());
            while (b.hasRemaining()) c.write(b);
            c.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory(file.getParent());
        channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        lines = records.size();
    }

    /** The rename is durable only once the directory is: Linux allows opening a directory to force it. */
    private static void forceDirectory(Path dir) {
        if (dir == null) return;
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // Some platforms refuse to open a directory; the rename is then as durable as they make it.
        }
    }

    private static byte[] line(RequestRecord r) {
        return (AccountingApi.toJson(r).toString() + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static RequestRecord parse(String line) {
        try {
            JsonNode o = JSON.readTree(line);
            if (o == null || !o.hasNonNull("request_id") || !o.hasNonNull("finish_reason") || !o.hasNonNull("ended_ms")) {
                return null;
            }
            return new RequestRecord(o.get("request_id").asText(), o.path("model").asText(null),
                    o.path("tenant").isNull() ? null : o.path("tenant").asText(null), o.path("prompt_tokens").asInt(),
                    o.path("cached_tokens").asInt(), o.path("generated_tokens").asInt(), o.path("delivered_tokens").asInt(),
                    o.path("recomputed_tokens").asInt(), o.get("finish_reason").asText(),
                    o.hasNonNull("message") ? o.get("message").asText() : null, o.path("started_ms").asLong(),
                    o.get("ended_ms").asLong());
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public synchronized void close() {
        try {
            if (channel != null) channel.close();
        } catch (IOException ignored) {
            // closing a file we only appended to and forced: nothing is lost
        }
    }
}
