package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dgr.engine.sampler.SamplerConfig;
import dgr.runtime.TextDecoder;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 27, item 4: every sampling field the engine's sampler implements changes the answer through the
 * API; the ones it does not are refused by name; fields a request omits take the server's defaults.
 */
class SamplingParametersTest {
    /** A token with an ordinary piece; the bias of +100 dwarfs llama-tiny's logits (|l| < 20). */
    static final int FORCED = 300;
    /** The server's defaults here: greedy, and at most 5 tokens per request. */
    static final int CAP = 5;

    static NodeServer node;
    static Http http;

    @BeforeAll
    static void start() {
        SamplerConfig greedyDefault = new SamplerConfig(0f, 40, 0.95f, 0.05f, 1f, 0f, 0f, 64, -1);
        node = TestNodes.start(TestNodes.config()
                .withServing(new ServingOptions(greedyDefault, CAP, null, List.of(), null, null)));
        http = new Http(node);
    }

    @AfterAll
    static void stop() { node.close(); }

    static String text(String extraFields) {
        HttpResponse<String> r = http.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"Once upon a time\","
                + "\"max_tokens\":4,\"ignore_eos\":true" + extraFields + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Http.json(r).at("/choices/0/text").asText();
    }

    static String pieces(int... ids) {
        TextDecoder d = node.models().find(TestNodes.MODEL).orElseThrow().newDecoder();
        StringBuilder sb = new StringBuilder();
        for (int id : ids) sb.append(d.push(id));
        return sb.toString();
    }

    @Test
    void topKOfOneIsGreedyWhateverTheTemperature() {
        String greedy = text(",\"temperature\":0");
        assertThat(text(",\"temperature\":2,\"seed\":1,\"top_k\":1,\"top_p\":1,\"min_p\":0")).isEqualTo(greedy);
        assertThat(text(",\"temperature\":2,\"seed\":2,\"top_k\":1,\"top_p\":1,\"min_p\":0")).isEqualTo(greedy);
    }

    @Test
    void minPOfOneKeepsOnlyTheMostLikelyToken() {
        String greedy = text(",\"temperature\":0");
        assertThat(text(",\"temperature\":2,\"seed\":3,\"top_k\":0,\"top_p\":1,\"min_p\":1")).isEqualTo(greedy);
    }

    @Test
    void hotSamplingWithoutFiltersDiffersFromGreedy() {
        // The control for the two tests above: the same temperature without top_k / min_p does sample.
        String greedy = text(",\"temperature\":0");
        assertThat(List.of(1, 2, 3, 4).stream().map(s -> text(",\"temperature\":2,\"top_k\":0,\"top_p\":1,\"min_p\":0,\"seed\":" + s)))
                .anyMatch(t -> !t.equals(greedy));
    }

    @Test
    void logitBiasIsApplied() {
        assertThat(text(",\"logit_bias\":{\"" + FORCED + "\":100}")).isEqualTo(pieces(FORCED, FORCED, FORCED, FORCED));
    }

    @Test
    void repeatPenaltyIsAppliedAfterTheBias() {
        // The bias makes FORCED the choice; a huge repeat penalty then pushes it down once it was generated.
        String penalized = text(",\"logit_bias\":{\"" + FORCED + "\":100},\"repeat_penalty\":1000");
        assertThat(penalized).startsWith(pieces(FORCED)).isNotEqualTo(pieces(FORCED, FORCED, FORCED, FORCED));
        // vLLM's name for the same setting.
        assertThat(text(",\"logit_bias\":{\"" + FORCED + "\":100},\"repetition_penalty\":1000")).isEqualTo(penalized);
    }

    @Test
    void omittedFieldsTakeTheServersDefaults() {
        // This server's default temperature is 0: a request without one is greedy, repeatably.
        assertThat(text("")).isEqualTo(text(",\"temperature\":0"));
        HttpResponse<String> r = http.post("/v1/chat/completions",
                "{\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"ignore_eos\":true}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(Http.json(r).at("/usage/completion_tokens").asInt()).isEqualTo(CAP);
    }

    @Test
    void aRequestAskingMoreThanTheCapGetsTheCap() {
        HttpResponse<String> r = http.post("/v1/completions",
                "{\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":50,\"ignore_eos\":true}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(Http.json(r).at("/usage/completion_tokens").asInt()).isEqualTo(CAP);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "typical_p       | ,\"typical_p\":0.5",
            "mirostat        | ,\"mirostat\":2",
            "tfs_z           | ,\"tfs_z\":0.9",
            "dry_multiplier  | ,\"dry_multiplier\":0.8",
            "xtc_probability | ,\"xtc_probability\":0.5",
            "use_beam_search | ,\"use_beam_search\":true",
    })
    void unsupportedSamplersAreRefusedByName(String field, String extra) {
        HttpResponse<String> r = http.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"a\"" + extra + "}");
        JsonNode e = ErrorResponsesTest.assertOpenAiError(r, 400);
        assertThat(e.get("param").asText()).isEqualTo(field);
        assertThat(e.get("code").asText()).isEqualTo("unsupported_parameter");
        assertThat(e.get("message").asText()).contains(field);
    }

    @Test
    void unsupportedSamplersAtTheirOffValueAreAccepted() {
        assertThat(text(",\"typical_p\":1,\"mirostat\":0,\"tfs_z\":1")).isEqualTo(text(",\"temperature\":0"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "top_k negative       | ,\"top_k\":-2                     | top_k",
            "min_p above one      | ,\"min_p\":1.5                    | min_p",
            "repeat_penalty zero  | ,\"repeat_penalty\":0             | repeat_penalty",
            "logit_bias as array  | ,\"logit_bias\":[1]               | logit_bias",
            "logit_bias bad key   | ,\"logit_bias\":{\"x\":1}         | logit_bias",
            "logit_bias too big   | ,\"logit_bias\":{\"1\":101}       | logit_bias",
            "logit_bias past vocab| ,\"logit_bias\":{\"99999\":1}     | logit_bias",
    })
    void badSamplingValuesAreRefusedWithTheField(String name, String extra, String param) {
        HttpResponse<String> r = http.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":\"a\"" + extra + "}");
        assertThat(ErrorResponsesTest.assertOpenAiError(r, 400).get("param").asText()).isEqualTo(param);
    }
}
