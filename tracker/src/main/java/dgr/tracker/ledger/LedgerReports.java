package dgr.tracker.ledger;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the ledger says to readers: usage per tenant and model ({@code GET /v1/usage}, {@code dgr tracker
 * usage}) and every request's row (the CSV / JSON export). Only settled rows count: an open reservation
 * is not usage yet. A time window {@code [from, to)} selects rows by arrival.
 */
public final class LedgerReports {
    /** Prompt and completion tokens of a set of settled requests. */
    public record Totals(long requests, long promptTokens, long completionTokens) {}

    /** One tenant's usage, in all and per model (models in name order). */
    public record Usage(String tenant, Totals total, Map<String, Totals> models) {
        /** {@code {"tenant", "requests", "prompt_tokens", "completion_tokens", "models": {m: {...}}}}. */
        public ObjectNode toJson() {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            o.put("tenant", tenant);
            put(o, total);
            ObjectNode m = o.putObject("models");
            models.forEach((model, t) -> put(m.putObject(model), t));
            return o;
        }

        private static void put(ObjectNode o, Totals t) {
            o.put("requests", t.requests());
            o.put("prompt_tokens", t.promptTokens());
            o.put("completion_tokens", t.completionTokens());
        }
    }

    /** The export's columns, in order: every field of a ledger row but the stored result. */
    public static final List<String> COLUMNS = List.of("request_id", "key_id", "tenant", "model", "state", "tracker",
            "reserved_tokens", "recipe_id", "nodes", "prompt_tokens", "cached_tokens", "generated_tokens",
            "delivered_tokens", "recomputed_tokens", "outcome", "http_status", "arrival", "first_token", "end");

    private final LedgerDatabase db;

    public LedgerReports(LedgerDatabase db) { this.db = db; }

    /** Usage of one tenant's settled requests that arrived in {@code [from, to)} (either may be null). */
    public Usage usage(String tenant, Instant from, Instant to) {
        return Transactions.<Usage, RuntimeException>read(db, c -> {
            Map<String, Totals> models = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT model, COUNT(*), SUM(prompt_tokens), "
                    + "SUM(generated_tokens) FROM requests WHERE tenant = ? AND state = 'settled' "
                    + "AND arrival_ms >= ? AND arrival_ms < ? GROUP BY model ORDER BY model")) {
                ps.setString(1, tenant);
                ps.setLong(2, from == null ? Long.MIN_VALUE : from.toEpochMilli());
                ps.setLong(3, to == null ? Long.MAX_VALUE : to.toEpochMilli());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) models.put(rs.getString(1), new Totals(rs.getLong(2), rs.getLong(3), rs.getLong(4)));
                }
            }
            long n = 0, p = 0, g = 0;
            for (Totals t : models.values()) {
                n += t.requests();
                p += t.promptTokens();
                g += t.completionTokens();
            }
            return new Usage(tenant, new Totals(n, p, g), models);
        });
    }

    /** Every tenant with a settled request in the window, in name order. */
    public List<String> tenants(Instant from, Instant to) {
        return Transactions.<List<String>, RuntimeException>read(db, c -> {
            List<String> tenants = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT DISTINCT tenant FROM requests WHERE state = 'settled' "
                    + "AND arrival_ms >= ? AND arrival_ms < ? ORDER BY tenant")) {
                ps.setLong(1, from == null ? Long.MIN_VALUE : from.toEpochMilli());
                ps.setLong(2, to == null ? Long.MAX_VALUE : to.toEpochMilli());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) tenants.add(rs.getString(1));
                }
            }
            return tenants;
        });
    }

    /** Export format of {@link #export}. */
    public enum Format { CSV, JSON }

    /**
     * Writes every row (open and settled) that arrived in the window, oldest first, optionally of one tenant:
     * CSV with a header line of {@link #COLUMNS}, or JSON lines (one object per row, the same names).
     * Times are ISO-8601 instants; absent values are empty (CSV) or null (JSON).
     */
    public int export(Writer out, Format format, String tenant, Instant from, Instant to) {
        return Transactions.<Integer, RuntimeException>read(db, c -> {
            String sql = "SELECT " + String.join(", ", COLUMNS).replace("arrival, first_token, end",
                    "arrival_ms, first_token_ms, end_ms") + " FROM requests WHERE arrival_ms >= ? AND arrival_ms < ?"
                    + (tenant == null ? "" : " AND tenant = ?") + " ORDER BY arrival_ms, request_id";
            int rows = 0;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, from == null ? Long.MIN_VALUE : from.toEpochMilli());
                ps.setLong(2, to == null ? Long.MAX_VALUE : to.toEpochMilli());
                if (tenant != null) ps.setString(3, tenant);
                if (format == Format.CSV) out.write(String.join(",", COLUMNS) + "\n");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        writeRow(out, format, rs);
                        rows++;
                    }
                }
                out.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return rows;
        });
    }

    private static void writeRow(Writer out, Format format, ResultSet rs) throws SQLException, IOException {
        ObjectNode json = JsonNodeFactory.instance.objectNode();
        List<String> cells = new ArrayList<>(COLUMNS.size());
        for (int i = 0; i < COLUMNS.size(); i++) {
            String name = COLUMNS.get(i);
            Object v = rs.getObject(i + 1);
            String text;
            if (v == null) text = null;
            else if (name.equals("arrival") || name.equals("first_token") || name.equals("end")) {
                text = Instant.ofEpochMilli(((Number) v).longValue()).toString();
            } else text = v.toString();
            if (format == Format.JSON) {
                if (text == null) json.putNull(name);
                else if (v instanceof Number n && !name.startsWith("arrival") && !name.equals("first_token")
                        && !name.equals("end")) json.put(name, n.longValue());
                else json.put(name, text);
            } else cells.add(text == null ? "" : csv(text));
        }
        out.write(format == Format.JSON ? json + "\n" : String.join(",", cells) + "\n");
    }

    private static String csv(String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0) return s;
        return '"' + s.replace("\"", "\"\"") + '"';
    }

    /**
     * A window bound as the API and CLI take it: an ISO-8601 instant ({@code 2026-12-01T10:00:00Z}), a date
     * ({@code 2026-12-01}, midnight UTC) or epoch seconds.
     *
     * @param name the parameter, for the error
     */
    public static Instant parseBound(String name, String value) {
        if (value == null || value.isBlank()) return null;
        String v = value.strip();
        try {
            if (v.chars().allMatch(Character::isDigit)) return Instant.ofEpochSecond(Long.parseLong(v));
            if (v.length() == 10) return LocalDate.parse(v).atStartOfDay(ZoneOffset.UTC).toInstant();
            return Instant.parse(v);
        } catch (DateTimeParseException | NumberFormatException e) {
            throw new IllegalArgumentException("'" + name + "' must be an ISO-8601 instant (2026-12-01T10:00:00Z), a date "
                    + "(2026-12-01) or epoch seconds, got '" + value + "'");
        }
    }
}
