package dgr.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import dgr.bench.target.RequestRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Writes bench-result.json and saturation.json. */
public final class ResultWriter {
    private final ObjectMapper json = ReportJson.mapper();

    public void writeResult(BenchResult r, Path file) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("schema", "dgr-bench-result/1");
        root.put("environment", r.environment());
        root.put("config", r.config());
        root.put("lanes", r.lanes());
        root.put("failed_checks", r.failedChecks());
        List<Map<String, Object>> runs = new ArrayList<>();
        for (RunResult run : r.runs()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("target", run.target());
            m.put("idle_probe_e2el_ms", run.idleProbeE2elMs());
            m.put("levels", run.levels());
            m.put("recommendation", run.recommendation());
            m.put("requests", run.requests().stream().map(ResultWriter::request).toList());
            m.put("iterations", run.iterations());
            runs.add(m);
        }
        root.put("runs", runs);
        write(root, file);
    }

    public void writeSaturation(SaturationFile s, Path file) { write(s, file); }

    static Map<String, Object> request(RequestRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id());
        m.put("level", r.level());
        m.put("tenant", r.tenant());
        m.put("client", r.client());
        m.put("probe", r.probe());
        m.put("start_ms", r.startNanos() / 1e6);
        m.put("ttft_ms", r.ttftMs());
        m.put("e2el_ms", r.e2elMs());
        m.put("tpot_ms", r.tpotMs());
        m.put("queue_ms", r.queueNanos() < 0 ? null : r.queueNanos() / 1e6);
        m.put("prompt_tokens", r.promptTokens() < 0 ? null : r.promptTokens());
        m.put("output_tokens", r.outputTokens());
        m.put("counted_tokens", r.countedTokens());
        m.put("sequence_id", r.sequenceId() < 0 ? null : r.sequenceId());
        m.put("finish_reason", r.finishReason());
        m.put("error", r.error());
        if (r.servedBy() != null) m.put("served_by", r.servedBy());
        m.put("itl_ms", r.itlMs());
        return m;
    }

    private void write(Object o, Path file) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            json.writeValue(file.toFile(), o);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
