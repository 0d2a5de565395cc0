package dgr.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.bench.metrics.Jain;
import dgr.bench.metrics.Summary;
import dgr.bench.target.PrometheusText;
import dgr.bench.target.SseEvents;
import dgr.bench.target.StallAnalyzer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ParsersTest {
    @Test
    void sseLinesAreReadLikeVllmsClient() {
        assertThat(SseEvents.parse("data: {\"choices\":[{\"text\":\"Hi\",\"finish_reason\":null}]}"))
                .isEqualTo(new SseEvents.Line.Chunk("Hi"));
        assertThat(SseEvents.parse("data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}"))
                .isEqualTo(new SseEvents.Line.Finish("length"));
        assertThat(SseEvents.parse("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}"))
                .isEqualTo(new SseEvents.Line.Usage(5, 7));
        assertThat(SseEvents.parse("data: [DONE]")).isInstanceOf(SseEvents.Line.Done.class);
        assertThat(SseEvents.parse(": keep-alive")).isInstanceOf(SseEvents.Line.Ignored.class);
        assertThat(SseEvents.parse(": X-Dgr-Node a:8081,b:8082")).as("a dgr tracker's list of the nodes that served")
                .isEqualTo(new SseEvents.Line.ServedBy("a:8081,b:8082"));
        assertThat(SseEvents.parse("data: {\"error\":{\"message\":\"boom\"}}")).isEqualTo(new SseEvents.Line.Error("boom"));
    }

    @Test
    void prometheusHistogramDeltaAndQuantile() {
        String before = """
                # TYPE dgr_request_queue_time_seconds histogram
                dgr_request_queue_time_seconds_bucket{model="m",le="0.1"} 1
                dgr_request_queue_time_seconds_bucket{model="m",le="1.0"} 1
                dgr_request_queue_time_seconds_bucket{model="m",le="+Inf"} 1
                dgr_request_queue_time_seconds_sum{model="m"} 0.05
                dgr_request_queue_time_seconds_count{model="m"} 1
                """;
        String after = """
                dgr_request_queue_time_seconds_bucket{model="m",le="0.1"} 3
                dgr_request_queue_time_seconds_bucket{model="m",le="1.0"} 5
                dgr_request_queue_time_seconds_bucket{model="m",le="+Inf"} 5
                dgr_request_queue_time_seconds_sum{model="m"} 1.25
                dgr_request_queue_time_seconds_count{model="m"} 5
                """;
        var a = PrometheusText.parse(after);
        var d = PrometheusText.delta(a.histogram("dgr_request_queue_time_seconds"),
                PrometheusText.parse(before).histogram("dgr_request_queue_time_seconds"));
        assertThat(d.get(0.1)).isEqualTo(2.0);
        assertThat(d.get(Double.POSITIVE_INFINITY)).isEqualTo(4.0);
        // 4 observations: 2 in (0, 0.1], 2 in (0.1, 1]; the median sits at the first bucket's top.
        assertThat(PrometheusText.quantile(d, 0.5)).isCloseTo(0.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(PrometheusText.quantile(d, 1.0)).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(a.value("dgr_request_queue_time_seconds_sum")).isEqualTo(1.25);
    }

    @Test
    void percentilesInterpolateAndStayOrdered() {
        Summary s = Summary.of(new double[] {4, 1, 3, 2, Double.NaN});
        assertThat(s.count()).isEqualTo(4);
        assertThat(s.p50()).isEqualTo(2.5);
        assertThat(s.p95()).isCloseTo(3.85, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(s.max()).isEqualTo(4);
        assertThat(Summary.of(new double[0])).isNull();
    }

    @Test
    void jainIsOneForEqualAndOneOverNForMonopoly() {
        assertThat(Jain.index(new double[] {2, 2, 2, 2})).isEqualTo(1.0);
        assertThat(Jain.index(new double[] {5, 0, 0, 0})).isEqualTo(0.25);
    }

    @Test
    void rangesAndTenantMixesParseWithPreciseErrors() {
        assertThat(IntRange.parse("64")).isEqualTo(new IntRange(64, 64));
        assertThat(IntRange.parse("8:16")).isEqualTo(new IntRange(8, 16));
        assertThatThrownBy(() -> IntRange.parse("16:8")).hasMessageContaining("min <= max");
        assertThatThrownBy(() -> IntRange.parse("x")).hasMessageContaining("N or A:B");
        TenantMix mix = TenantMix.parse("1:1,6:1");
        assertThat(mix.clients()).isEqualTo(7);
        assertThat(mix.assign(7)).containsExactly("t0", "t1", "t1", "t1", "t1", "t1", "t1");
        assertThat(TenantMix.parse("2:3").assign(6)).containsExactly("t0", "t0", "t1", "t1", "t2", "t2");
    }

    @Test
    void stallAnalyzerCountsIterationsWithoutRowsSinceAdmissionAndBetweenDecodeRows() {
        long ms = 1_000_000;
        // Session 1 admitted at iteration 0: prefill at 0, decode at 1, skipped at 2 and 3, decode at 4.
        // Session 2 admitted at 1: waits iterations 1 and 2, prefill at 3.
        var traces = List.of(
                new StallAnalyzer.Trace(0, 1 * ms, ms, new long[] {1}, new long[0]),
                new StallAnalyzer.Trace(1, 2 * ms, ms, new long[0], new long[] {1}),
                new StallAnalyzer.Trace(2, 3 * ms, ms, new long[0], new long[0]),
                new StallAnalyzer.Trace(3, 4 * ms, ms, new long[] {2}, new long[0]),
                new StallAnalyzer.Trace(4, 5 * ms, ms, new long[0], new long[] {1, 2}));
        var r = StallAnalyzer.analyze(traces, Map.of(1L, 0L, 2L, 1L));
        assertThat(r.longestDecodeStallIterations()).isEqualTo(2);
        assertThat(r.longestDecodeStallMs()).isCloseTo(2.0, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(r.longestPrefillWaitIterations()).isEqualTo(2);
        assertThat(r.decodeSessionsSeen()).isEqualTo(2);
        // Session 1 was decodable from iteration 1 to 4 and served twice; session 2 once in one.
        assertThat(r.decodeServiceRates()).containsExactlyInAnyOrder(0.5, 1.0);
    }
}
