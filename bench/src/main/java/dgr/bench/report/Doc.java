package dgr.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A tiny document model (headings, paragraphs, tables, images) rendered both to Markdown and to a
 * self-contained HTML page (images inlined), so report.md and report.html always say the same.
 */
final class Doc {
    sealed interface Block {}
    record Heading(int level, String text) implements Block {}
    record Para(String text) implements Block {}
    record Table(List<String> header, List<List<String>> rows) implements Block {}
    record Image(String title, String file) implements Block {}

    final List<Block> blocks = new ArrayList<>();

    Doc h(int level, String text) { blocks.add(new Heading(level, text)); return this; }

    Doc p(String text) { blocks.add(new Para(text)); return this; }

    Doc table(List<String> header, List<List<String>> rows) { blocks.add(new Table(header, rows)); return this; }

    Doc image(String title, String file) { blocks.add(new Image(title, file)); return this; }

    String markdown() {
        StringBuilder sb = new StringBuilder();
        for (Block b : blocks) {
            switch (b) {
                case Heading h -> sb.append("#".repeat(h.level())).append(' ').append(h.text()).append("\n\n");
                case Para p -> sb.append(p.text()).append("\n\n");
                case Table t -> {
                    sb.append("| ").append(String.join(" | ", t.header())).append(" |\n|");
                    t.header().forEach(x -> sb.append("---|"));
                    sb.append('\n');
                    for (List<String> r : t.rows()) sb.append("| ").append(String.join(" | ", r.stream().map(c -> c.replace("|", "\\|")).toList())).append(" |\n");
                    sb.append('\n');
                }
                case Image i -> sb.append("![").append(i.title()).append("](").append(i.file()).append(")\n\n");
            }
        }
        return sb.toString();
    }

    String html(String title, Path dir) {
        StringBuilder sb = new StringBuilder("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
                .append(esc(title)).append("</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;}"
                        + "table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
                        + "th{background:#eee}td:first-child{text-align:left}code{background:#f4f4f4}</style></head><body>\n");
        for (Block b : blocks) {
            switch (b) {
                case Heading h -> sb.append("<h").append(h.level()).append('>').append(inline(h.text())).append("</h").append(h.level()).append(">\n");
                case Para p -> sb.append("<p>").append(inline(p.text())).append("</p>\n");
                case Table t -> {
                    sb.append("<table><tr>");
                    t.header().forEach(x -> sb.append("<th>").append(inline(x)).append("</th>"));
                    sb.append("</tr>\n");
                    for (List<String> r : t.rows()) {
                        sb.append("<tr>");
                        r.forEach(c -> sb.append("<td>").append(inline(c)).append("</td>"));
                        sb.append("</tr>\n");
                    }
                    sb.append("</table>\n");
                }
                case Image i -> sb.append("<figure><img alt=\"").append(esc(i.title())).append("\" src=\"data:image/png;base64,")
                        .append(base64(dir.resolve(i.file()))).append("\"><figcaption>").append(esc(i.title()))
                        .append("</figcaption></figure>\n");
            }
        }
        return sb.append("</body></html>\n").toString();
    }

    private static String base64(Path f) {
        try {
            return Base64.getEncoder().encodeToString(Files.readAllBytes(f));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read plot " + f, e);
        }
    }

    /** Escapes HTML and turns Markdown's `code` and **bold** into tags. */
    private static String inline(String s) {
        return esc(s).replaceAll("`([^`]*)`", "<code>$1</code>").replaceAll("\\*\\*([^*]*)\\*\\*", "<b>$1</b>");
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
