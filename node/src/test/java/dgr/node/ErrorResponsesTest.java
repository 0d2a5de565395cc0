package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Bad input gets a 4xx in OpenAI's error shape, leaks nothing, and leaves no session behind. */
class ErrorResponsesTest {
    static NodeServer node;
    static Http http;

    @BeforeAll
    static void start() {
        node = TestNodes.start(TestNodes.config().withMaxBodyBytes(8192));
        http = new Http(node);
    }

    @AfterAll
    static void stop() { node.close(); }

    static JsonNode assertOpenAiError(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).contains("application/json"));
        JsonNode body = Http.json(r);
        assertThat(body.fieldNames()).toIterable().containsExactly("error");
        JsonNode e = body.get("error");
        assertThat(e.fieldNames()).toIterable().containsExactlyInAnyOrder("message", "type", "param", "code");
        assertThat(e.get("message").asText()).isNotBlank();
        assertThat(e.get("type").isTextual()).isTrue();
        // Nothing internal leaks: no stack frames, no exception class names.
        assertThat(r.body()).doesNotContain("at dgr.", "at io.helidon", "Exception", "\tat ");
        return e;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '\'', value = {
            "malformed JSON          | {\"model\": \"llama-tiny\", \"prompt\": | 400 | ",
            "trailing garbage        | {\"model\":\"llama-tiny\",\"prompt\":\"a\"} x | 400 | ",
            "not an object           | [1,2,3] | 400 | ",
            "empty body              | '' | 400 | ",
            "model of wrong type     | {\"model\":7,\"prompt\":\"a\"} | 400 | model",
            "missing prompt          | {\"model\":\"llama-tiny\"} | 400 | prompt",
            "prompt of wrong type    | {\"model\":\"llama-tiny\",\"prompt\":{\"a\":1}} | 400 | prompt",
            "token id not an integer | {\"model\":\"llama-tiny\",\"prompt\":[1,2.5]} | 400 | prompt",
            "token id past the vocab | {\"model\":\"llama-tiny\",\"prompt\":[1,99999]} | 400 | prompt",
            "max_tokens as string    | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":\"ten\"} | 400 | max_tokens",
            "max_tokens zero         | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":0} | 400 | max_tokens",
            "max_tokens negative     | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":-3} | 400 | max_tokens",
            "max_tokens past context | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"max_tokens\":100000} | 400 | max_tokens",
            "temperature too high    | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"temperature\":3} | 400 | temperature",
            "top_p as bool           | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"top_p\":true} | 400 | top_p",
            "n greater than one      | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"n\":2} | 400 | n",
            "stop of wrong type      | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"stop\":[1]} | 400 | stop",
            "five stop strings       | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]} | 400 | stop",
            "seed as string          | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"seed\":\"x\"} | 400 | seed",
            "stream as string        | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"stream\":\"yes\"} | 400 | stream",
            "stream_options alone    | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"stream_options\":{\"include_usage\":true}} | 400 | stream_options",
            "ignore_eos as string    | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"ignore_eos\":\"yes\"} | 400 | ignore_eos",
            "unsupported echo        | {\"model\":\"llama-tiny\",\"prompt\":\"a\",\"echo\":true} | 400 | echo",
            "unknown model           | {\"model\":\"gpt-9\",\"prompt\":\"a\"} | 404 | model",
    })
    void badCompletionRequestsGetOpenAiErrors(String name, String body, int status, String param) {
        JsonNode e = assertOpenAiError(http.post("/v1/completions", body), status);
        if (param != null) assertThat(e.get("param").asText()).isEqualTo(param);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "messages missing     | {\"model\":\"llama-tiny\"} | messages",
            "messages not array   | {\"model\":\"llama-tiny\",\"messages\":\"hi\"} | messages",
            "messages empty       | {\"model\":\"llama-tiny\",\"messages\":[]} | messages",
            "role unknown         | {\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"wizard\",\"content\":\"x\"}]} | messages[0].role",
            "content wrong type   | {\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":5}]} | messages[0].content",
            "max_completion zero  | {\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_completion_tokens\":0} | max_completion_tokens",
            "template kwargs list | {\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"chat_template_kwargs\":[1]} | chat_template_kwargs",
            "template kwargs own  | {\"model\":\"llama-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"chat_template_kwargs\":{\"bos_token\":\"x\"}} | chat_template_kwargs",
    })
    void badChatRequestsGetOpenAiErrors(String name, String body, String param) {
        JsonNode e = assertOpenAiError(http.post("/v1/chat/completions", body), 400);
        assertThat(e.get("param").asText()).isEqualTo(param);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '\'', value = {
            "unclosed object   | {\"model\": \"llama-tiny\", \"prompt\":  | line 1, column 34 | ends before",
            "unquoted key      | {model:1}                                  | line 1, column 2  | unexpected character 'm', expected double-quote",
            "misspelled true   | {\"stream\":tru}                           | line 1, column    | 'tru' is not a JSON value",
            "unclosed array    | [1,2                                       | line 1, column 5  | ends before",
            "two values        | {} {}                                      | line 1            | more data follows",
    })
    void malformedJsonIsDescribedWithoutParserInternals(String name, String body, String where, String what) {
        JsonNode e = assertOpenAiError(http.post("/v1/completions", body), 400);
        String message = e.get("message").asText();
        assertThat(message).startsWith("The request body is not valid JSON").contains(where).contains(what);
        assertThat(message).doesNotContain("code ", "Source", "REDACTED", "StreamReadFeature", "DeserializationFeature",
                "com.fasterxml", "JsonNode", "`");
        assertThat(e.get("code").asText()).isEqualTo("invalid_json");
    }

    @Test
    void promptLongerThanTheContextIs400AndHoldsNoState() {
        String ids = IntStream.range(0, 600).mapToObj(i -> Integer.toString(i % 1000)).collect(Collectors.joining(","));
        // Under the body limit as ids, and 600 tokens > 512 of context.
        JsonNode e = assertOpenAiError(http.post("/v1/completions", "{\"model\":\"llama-tiny\",\"prompt\":[" + ids + "]}"), 400);
        assertThat(e.get("code").asText()).isEqualTo("context_length_exceeded");
        PromText m = PromText.parse(http.get("/metrics").body());
        assertThat(m.value("dgr_num_requests_running", Map.of("model", "llama-tiny"))).isZero();
        assertThat(m.value("dgr_state_bytes_used", Map.of("model", "llama-tiny"))).isZero();
    }

    @Test
    void oversizedBodyIs413() {
        String big = "{\"model\":\"llama-tiny\",\"prompt\":\"" + "a".repeat(10_000) + "\"}";
        JsonNode e = assertOpenAiError(http.post("/v1/completions", big), 413);
        assertThat(e.get("code").asText()).isEqualTo("request_too_large");
    }

    @Test
    void unknownRouteIs404() {
        assertOpenAiError(http.get("/v1/embeddings"), 404);
        assertOpenAiError(http.post("/nope", "{}"), 404);
    }

    @Test
    void wrongMethodIs405WithAllow() {
        HttpResponse<String> r = http.get("/v1/completions");
        assertOpenAiError(r, 405);
        assertThat(r.headers().firstValue("allow")).hasValue("POST");
        assertOpenAiError(http.method("DELETE", "/v1/models"), 405);
    }

    @Test
    void healthIsOkOnceLoaded() {
        HttpResponse<String> r = http.get("/health");
        assertThat(r.statusCode()).isEqualTo(200);
    }
}
