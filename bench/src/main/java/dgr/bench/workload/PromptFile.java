package dgr.bench.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --prompts FILE}: one JSON object per line, {@code {"prompt": "text"}} or
 * {@code {"prompt_token_ids": [1, 2, 3]}}, optionally {@code "max_tokens": N}. Blank lines are skipped.
 */
public final class PromptFile {
    public record Entry(String text, int[] ids, int maxTokens) {}

    private PromptFile() {}

    public static List<Entry> read(Path file) {
        ObjectMapper json = new ObjectMapper();
        List<Entry> out = new ArrayList<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read prompts file " + file, e);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty()) continue;
            String where = file + ":" + (i + 1);
            JsonNode n;
            try {
                n = json.readTree(line);
            } catch (IOException e) {
                throw new IllegalArgumentException(where + ": not JSON: " + e.getMessage());
            }
            int max = n.path("max_tokens").asInt(0);
            JsonNode ids = n.get("prompt_token_ids");
            if (ids != null && ids.isArray() && !ids.isEmpty()) {
                int[] a = new int[ids.size()];
                for (int k = 0; k < a.length; k++) {
                    if (!ids.get(k).canConvertToInt()) throw new IllegalArgumentException(where + ": prompt_token_ids must be integers");
                    a[k] = ids.get(k).asInt();
                }
                out.add(new Entry(null, a, max));
            } else if (n.path("prompt").isTextual() && !n.get("prompt").asText().isEmpty()) {
                out.add(new Entry(n.get("prompt").asText(), null, max));
            } else {
                throw new IllegalArgumentException(where + ": needs a non-empty \"prompt\" string or \"prompt_token_ids\" array");
            }
        }
        if (out.isEmpty()) throw new IllegalArgumentException(file + " has no prompts");
        return out;
    }
}
