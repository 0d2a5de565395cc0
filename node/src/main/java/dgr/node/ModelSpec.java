package dgr.node;

import java.nio.file.Path;

/**
 * A model to serve: a GGUF file and the id clients name it by ({@code alias}, or the file name
 * without {@code .gguf} when null).
 */
public record ModelSpec(Path path, String alias) {
    public ModelSpec {
        if (path == null) throw new IllegalArgumentException("model path is required");
        if (alias != null && alias.isBlank()) throw new IllegalArgumentException("model alias must not be blank");
    }

    public static ModelSpec of(Path path) { return new ModelSpec(path, null); }

    public String id() {
        if (alias != null) return alias;
        String name = path.getFileName().toString();
        return name.endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }
}
