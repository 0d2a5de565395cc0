package dgr.gguf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An artifact: one GGUF file or a split set ({@code name-00001-of-00003.gguf}, as written by
 * llama.cpp's gguf-split). Metadata comes from the first part; the tensor table is the union of all
 * parts, each tensor pointing into its own part's mapping.
 */
public final class GgufArtifact implements AutoCloseable {
    private static final Pattern SPLIT = Pattern.compile("(.*)-(\\d{5})-of-(\\d{5})\\.gguf");

    private final List<GgufFile> parts;
    private final List<TensorInfo> tensors;
    private final Map<String, TensorInfo> byName;

    private GgufArtifact(List<GgufFile> parts) {
        this.parts = List.copyOf(parts);
        Map<String, TensorInfo> map = new LinkedHashMap<>();
        for (GgufFile p : parts) {
            for (TensorInfo t : p.tensors()) {
                if (map.put(t.name(), t) != null) {
                    throw new GgufFormatException(p.path() + ": tensor '" + t.name() + "' appears in two split parts");
                }
            }
        }
        this.byName = Collections.unmodifiableMap(map);
        this.tensors = List.copyOf(map.values());
    }

    /** Opens a file; when its name is part 1 of a split set, opens every part and checks the set. */
    public static GgufArtifact open(Path path) {
        return open(path, true);
    }

    /** As {@link #open(Path)}; with {@code strictLayout} false, overlapping tensors are warnings ({@link GgufFile#layoutWarnings}). */
    public static GgufArtifact open(Path path, boolean strictLayout) {
        Matcher m = SPLIT.matcher(path.getFileName().toString());
        if (!m.matches()) return new GgufArtifact(List.of(GgufFile.open(path, strictLayout)));
        int no = Integer.parseInt(m.group(2));
        int count = Integer.parseInt(m.group(3));
        if (no != 1) {
            throw new GgufFormatException(path + ": this is part " + no + " of a split set; open part 00001 instead");
        }
        List<GgufFile> parts = new ArrayList<>();
        try {
            for (int i = 1; i <= count; i++) {
                Path p = path.resolveSibling(String.format("%s-%05d-of-%05d.gguf", m.group(1), i, count));
                if (!Files.exists(p)) throw new GgufFormatException(p + ": split part " + i + " of " + count + " is missing");
                GgufFile f = GgufFile.open(p, strictLayout);
                parts.add(f);
                long sc = f.metadata().getLong("split.count", count);
                long sn = f.metadata().getLong("split.no", i - 1);
                if (sc != count || sn != i - 1) {
                    throw new GgufFormatException(p + ": split.no/split.count say part " + (sn + 1) + " of " + sc
                            + " but the name says " + i + " of " + count);
                }
            }
            GgufArtifact a = new GgufArtifact(parts);
            long expected = parts.getFirst().metadata().getLong("split.tensors.count", a.tensors.size());
            if (expected != a.tensors.size()) {
                throw new GgufFormatException(path + ": split.tensors.count is " + expected + " but the parts hold "
                        + a.tensors.size() + " tensors");
            }
            return a;
        } catch (RuntimeException e) {
            parts.forEach(GgufFile::close);
            throw e;
        }
    }

    /** An artifact of one already opened (or parsed) file; closing the artifact closes it. */
    public static GgufArtifact of(GgufFile file) {
        return new GgufArtifact(List.of(file));
    }

    public List<GgufFile> parts() { return parts; }
    public Path path() { return parts.getFirst().path(); }
    public Metadata metadata() { return parts.getFirst().metadata(); }
    public List<TensorInfo> tensors() { return tensors; }

    public TensorInfo tensor(String name) {
        TensorInfo t = byName.get(name);
        if (t == null) throw new GgufFormatException(path() + ": missing tensor '" + name + "'");
        return t;
    }

    public TensorInfo tensorOrNull(String name) { return byName.get(name); }

    public long totalBytes() {
        long n = 0;
        for (GgufFile p : parts) n += p.fileSize();
        return n;
    }

    @Override
    public void close() {
        parts.forEach(GgufFile::close);
    }
}
