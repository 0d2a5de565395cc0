package dgr.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * The benchmark's {@code saturation.json} as the capability report carries it: verbatim with its
 * provenance when it was measured on an artifact this node serves, otherwise reported as absent or
 * ignored with the reason. Recommendations are never invented.
 *
 * <p>The file holds entries (the root object, or objects nested anywhere in it) that name an
 * {@code artifact_sha256}; the file applies when at least one entry names a loaded artifact.
 */
public final class Saturation {
    private static final System.Logger LOG = System.getLogger(Saturation.class.getName());

    private Saturation() {}

    /**
     * @param file            the file, or null when none was given and none lies beside the model
     * @param loadedArtifacts sha256 of every artifact this node serves
     */
    public static ObjectNode report(Path file, Set<String> loadedArtifacts) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        if (file == null || !Files.isRegularFile(file)) {
            out.put("status", "absent");
            if (file != null) out.put("path", file.toString());
            return out;
        }
        byte[] bytes;
        JsonNode doc;
        try {
            bytes = Files.readAllBytes(file);
            doc = new ObjectMapper().readTree(bytes);
        } catch (IOException e) {
            return ignored(out, file, "cannot read it as JSON: " + firstLine(e.getMessage()));
        }
        if (doc == null || !doc.isContainerNode()) return ignored(out, file, "it is not a JSON object or array");
        List<String> named = new ArrayList<>();
        collectArtifacts(doc, named);
        if (named.isEmpty()) return ignored(out, file, "it names no artifact_sha256 to check against the loaded models");
        List<String> matching = named.stream().filter(loadedArtifacts::contains).distinct().toList();
        if (matching.isEmpty()) {
            return ignored(out, file, "it was measured on artifact " + named.getFirst()
                    + ", not on a model this node serves " + loadedArtifacts);
        }
        out.put("status", "loaded");
        ObjectNode provenance = out.putObject("provenance");
        provenance.put("path", file.toAbsolutePath().toString());
        provenance.put("file_sha256", sha256(bytes));
        provenance.putPOJO("matched_artifacts", matching);
        out.set("document", doc);
        return out;
    }

    private static ObjectNode ignored(ObjectNode out, Path file, String reason) {
        LOG.log(System.Logger.Level.WARNING, "ignoring saturation file " + file + ": " + reason);
        out.put("status", "ignored");
        out.put("path", file.toString());
        out.put("reason", reason);
        return out;
    }

    private static void collectArtifacts(JsonNode n, List<String> out) {
        if (n.isObject()) {
            JsonNode a = n.get("artifact_sha256");
            if (a != null && a.isTextual()) out.add(a.asText().toLowerCase(java.util.Locale.ROOT));
        }
        for (JsonNode child : n) if (child.isContainerNode()) collectArtifacts(child, out);
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
