package dgr.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The API keys a node accepts, each mapped to the tenant its requests are charged to (the
 * scheduler's fairness tenant). With no keys configured the node is open.
 */
public final class ApiKeys {
    private final Map<String, String> tenantByKey;

    private ApiKeys(Map<String, String> tenantByKey) {
        this.tenantByKey = Map.copyOf(tenantByKey);
    }

    public static ApiKeys none() { return new ApiKeys(Map.of()); }

    /**
     * Keys given on the command line (each is its own tenant, named by a short prefix so logs and
     * metrics never carry a whole key) plus a keys file of {@code key tenant} lines ({@code #}
     * comments and blank lines allowed).
     */
    public static ApiKeys of(List<String> keys, Path keysFile) throws IOException {
        Map<String, String> map = new LinkedHashMap<>();
        for (String k : keys) {
            if (k.isBlank()) throw new IllegalArgumentException("an API key must not be blank");
            map.put(k, "key-" + k.substring(0, Math.min(6, k.length())));
        }
        if (keysFile != null) {
            List<String> lines = Files.readAllLines(keysFile, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).strip();
                if (line.isEmpty() || line.startsWith("#")) continue;
                String[] parts = line.split("\\s+");
                if (parts.length != 2) {
                    throw new IllegalArgumentException(keysFile + ":" + (i + 1) + ": expected 'key tenant', got "
                            + parts.length + " fields");
                }
                map.put(parts[0], parts[1]);
            }
        }
        return new ApiKeys(map);
    }

    public boolean enabled() { return !tenantByKey.isEmpty(); }

    /** The tenant of a valid {@code Authorization: Bearer KEY} header value, or empty. */
    public Optional<String> tenantFor(String authorizationHeader) {
        if (authorizationHeader == null) return Optional.empty();
        String h = authorizationHeader.strip();
        if (h.length() < 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) return Optional.empty();
        byte[] given = h.substring(7).strip().getBytes(StandardCharsets.UTF_8);
        // Constant-time comparison against every key, so timing does not reveal a key's prefix.
        String tenant = null;
        for (Map.Entry<String, String> e : tenantByKey.entrySet()) {
            if (MessageDigest.isEqual(given, e.getKey().getBytes(StandardCharsets.UTF_8))) tenant = e.getValue();
        }
        return Optional.ofNullable(tenant);
    }
}
