package dgr.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Everything that fixes the numbers a forward pass produces. Two stages with the same recipe are
 * interchangeable; {@link #id()} is the hash of the canonical JSON below.
 *
 * @param artifactSha256 sha256 of the GGUF artifact (first part for split sets)
 * @param architecture   {@code llama} or {@code deepseek4}
 * @param firstLayer     first layer of the span (inclusive)
 * @param endLayer       end of the span (exclusive)
 * @param nLayers        the model's total layer count (a span covering all is a whole model)
 * @param contextLength  maximum positions per session
 * @param stateDtype     dtype of the per-session state (K/V), e.g. {@code f32}
 * @param rope           canonical string of the rope settings in force
 */
public record Recipe(String artifactSha256, String architecture, int firstLayer, int endLayer, int nLayers,
                     int contextLength, String stateDtype, String rope) {

    public boolean isFirstStage() { return firstLayer == 0; }

    public boolean isLastStage() { return endLayer == nLayers; }

    /** Canonical JSON: fixed key order, no whitespace. */
    public String canonicalJson() {
        return "{\"architecture\":\"" + architecture + "\",\"artifact_sha256\":\"" + artifactSha256
                + "\",\"context_length\":" + contextLength + ",\"end_layer\":" + endLayer
                + ",\"first_layer\":" + firstLayer + ",\"n_layers\":" + nLayers
                + ",\"rope\":\"" + rope.replace("\"", "'") + "\",\"state_dtype\":\"" + stateDtype + "\"}";
    }

    /** First 16 hex digits of sha256(canonical JSON). */
    public String id() {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(canonicalJson().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
