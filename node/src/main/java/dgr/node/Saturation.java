package dgr.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The benchmark's {@code saturation.json} (docs/schemas/saturation.schema.json, schema_version 1)
 * read against the models this node serves. An entry applies to a model only when both its
 * {@code artifact_sha256} and its {@code recipe_id} equal the model's: the same file with another
 * context length or layer span is another recipe and its numbers do not transfer. Every other entry
 * is ignored with a warning and listed with its reason; recommendations are never invented.
 */
public final class Saturation {
    public static final int SCHEMA_VERSION = 1;
    private static final System.Logger LOG = System.getLogger(Saturation.class.getName());

    /** A model as entries are matched against it. */
    public record Served(String modelId, String artifactSha256, String recipeId, String engineId) {
        /** A served model whose engine is not checked against the entries'. */
        public Served(String modelId, String artifactSha256, String recipeId) {
            this(modelId, artifactSha256, recipeId, null);
        }
    }

    /**
     * A recommendation that applies to a served model.
     *
     * @param entry the file's entry, verbatim
     */
    public record Applied(String modelId, int recommendedMaxConcurrency, String measuredAt, String path,
                          JsonNode entry) {}

    /**
     * What was read.
     *
     * @param report  the capability report's {@code saturation} object
     * @param byModel the recommendation in force per model id (models without one are absent)
     */
    public record Loaded(ObjectNode report, Map<String, Applied> byModel) {
        public Optional<Applied> forModel(String id) { return Optional.ofNullable(byModel.get(id)); }

        public static Loaded absent() {
            return new Loaded(JsonNodeFactory.instance.objectNode().put("status", "absent"), Map.of());
        }
    }

    private Saturation() {}

    /**
     * The entry's engine ({@code java-q8/1}) where it names one and it is not the served model's;
     * null where they agree or either is unknown (a file measured through a server that names none).
     */
    private static String otherEngine(JsonNode entry, Served s) {
        String engine = text(entry, "engine");
        return engine == null || s.engineId() == null || engine.equals(s.engineId()) ? null : engine;
    }

    /** @param file the file, or null when none was given and none lies beside the model */
    public static Loaded load(Path file, List<Served> served) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        if (file == null || !Files.isRegularFile(file)) {
            out.put("status", "absent");
            if (file != null) out.put("path", file.toString());
            return new Loaded(out, Map.of());
        }
        byte[] bytes;
        JsonNode doc;
        try {
            bytes = Files.readAllBytes(file);
            doc = new ObjectMapper().readTree(bytes);
        } catch (IOException e) {
            return ignoredFile(out, file, "cannot read it as JSON: " + firstLine(e.getMessage()));
        }
        if (doc == null || !doc.isObject()) return ignoredFile(out, file, "it is not a JSON object");
        JsonNode version = doc.get("schema_version");
        if (version == null || !version.isInt() || version.asInt() != SCHEMA_VERSION) {
            return ignoredFile(out, file, "schema_version is " + version + ", this node reads " + SCHEMA_VERSION);
        }
        JsonNode entries = doc.get("recommendations");
        if (entries == null || !entries.isArray()) return ignoredFile(out, file, "it has no recommendations array");

        ObjectNode provenance = out.putObject("provenance");
        provenance.put("path", file.toAbsolutePath().toString());
        provenance.put("file_sha256", sha256(bytes));
        provenance.put("schema_version", SCHEMA_VERSION);
        copy(doc, provenance, "generated_by");
        copy(doc, provenance, "measured_at");
        copy(doc, provenance, "machine");
        ArrayNode loaded = out.putArray("recommendations");
        ArrayNode ignored = out.putArray("ignored");
        Map<String, Applied> byModel = new LinkedHashMap<>();
        for (JsonNode e : entries) {
            String reason = null;
            Served match = null;
            if (!e.isObject()) {
                reason = "the entry is not an object";
            } else {
                String sha = text(e, "artifact_sha256");
                String recipe = text(e, "recipe_id");
                JsonNode rec = e.get("recommended_max_concurrency");
                if (sha == null || recipe == null) {
                    reason = "it names no artifact_sha256 and recipe_id to check against the loaded models";
                } else if (rec == null || !rec.canConvertToInt() || !rec.isIntegralNumber() || rec.asInt() < 1) {
                    reason = "recommended_max_concurrency is " + rec + ", not an integer >= 1";
                } else {
                    List<Served> sameArtifact = served.stream()
                            .filter(s -> s.artifactSha256().equalsIgnoreCase(sha)).toList();
                    match = sameArtifact.stream().filter(s -> s.recipeId().equalsIgnoreCase(recipe)).findFirst().orElse(null);
                    if (sameArtifact.isEmpty()) {
                        reason = "measured on artifact " + sha + ", which this node does not serve";
                    } else if (match == null) {
                        reason = "recipe " + recipe + " differs from the recipe this node loaded from that artifact ("
                                + sameArtifact.stream().map(s -> s.modelId() + ": " + s.recipeId()).toList()
                                + "): another context length, span or state dtype";
                    } else if (otherEngine(e, match) != null) {
                        reason = "measured on engine " + otherEngine(e, match) + ", this node runs " + match.engineId()
                                + " (another version's bits: its throughput is not this build's)";
                        match = null;
                    } else if (byModel.containsKey(match.modelId())) {
                        reason = "an earlier entry already applies to model " + match.modelId();
                        match = null;
                    }
                }
            }
            if (match != null) {
                ObjectNode copy = ((ObjectNode) e).deepCopy();
                copy.put("model", match.modelId());
                loaded.add(copy);
                byModel.put(match.modelId(), new Applied(match.modelId(), e.get("recommended_max_concurrency").asInt(),
                        e.path("measured_at").asText(null), file.toAbsolutePath().toString(), e));
            } else {
                LOG.log(System.Logger.Level.WARNING, "ignoring a recommendation in " + file + ": " + reason);
                ObjectNode ig = ignored.addObject();
                for (String f : List.of("recipe_id", "lane", "artifact_sha256", "model_name")) {
                    if (e.isObject()) copy(e, ig, f);
                }
                ig.put("reason", reason);
            }
        }
        if (doc.has("lanes_not_measured")) out.set("lanes_not_measured", doc.get("lanes_not_measured"));
        if (byModel.isEmpty()) {
            String reason = entries.isEmpty() ? "it holds no recommendations"
                    : "no recommendation matches a served model's artifact and recipe (see ignored)";
            LOG.log(System.Logger.Level.WARNING, "ignoring saturation file " + file + ": " + reason);
            out.put("status", "ignored");
            out.put("reason", reason);
        } else {
            out.put("status", "loaded");
        }
        out.put("path", file.toString());
        // Field order: status first reads best; rebuild with it in front.
        ObjectNode ordered = JsonNodeFactory.instance.objectNode();
        ordered.set("status", out.get("status"));
        out.fields().forEachRemaining(f -> { if (!f.getKey().equals("status")) ordered.set(f.getKey(), f.getValue()); });
        return new Loaded(ordered, Map.copyOf(byModel));
    }

    private static Loaded ignoredFile(ObjectNode out, Path file, String reason) {
        LOG.log(System.Logger.Level.WARNING, "ignoring saturation file " + file + ": " + reason);
        out.put("status", "ignored");
        out.put("path", file.toString());
        out.put("reason", reason);
        return new Loaded(out, Map.of());
    }

    /** A hex id field, lower-cased for comparison; null when absent or not text. */
    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v != null && v.isTextual() ? v.asText().toLowerCase(Locale.ROOT) : null;
    }

    private static void copy(JsonNode from, ObjectNode to, String field) {
        JsonNode v = from.get(field);
        if (v != null) to.set(field, v);
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
