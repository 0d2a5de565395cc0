package dgr.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The official OpenAI Java SDK against a real node: completions and chat, whole and streamed. */
class OpenAiSdkTest {
    static NodeServer node;
    static OpenAIClient client;

    @BeforeAll
    static void start() {
        node = TestNodes.start(TestNodes.config());
        client = OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + node.port() + "/v1").apiKey("unused")
                .maxRetries(0).build();
    }

    @AfterAll
    static void stop() {
        client.close();
        node.close();
    }

    private static CompletionCreateParams completion(int maxTokens) {
        return CompletionCreateParams.builder().model(TestNodes.MODEL).prompt("The quick brown fox")
                .maxTokens(maxTokens).temperature(0.0).build();
    }

    @Test
    void listsTheServedModel() {
        List<Model> models = client.models().list().data();
        assertThat(models).extracting(Model::id).containsExactly(TestNodes.MODEL);
    }

    @Test
    void completionUsageIsTheSessionsExactAccounting() {
        Completion c = client.completions().create(completion(12));
        assertThat(c.model()).isEqualTo(TestNodes.MODEL);
        assertThat(c.choices()).hasSize(1);
        var usage = c.usage().orElseThrow();
        // The tiny model's greedy text may end early only on its end-of-generation id.
        String reason = c.choices().getFirst().finishReason().asString();
        assertThat(reason).isIn("length", "stop");
        if (reason.equals("length")) assertThat(usage.completionTokens()).isEqualTo(12);
        // "The quick brown fox" is BOS + 9 ids in this vocabulary (the conformance prompt's first 10).
        assertThat(usage.promptTokens()).isEqualTo(10);
        assertThat(usage.totalTokens()).isEqualTo(usage.promptTokens() + usage.completionTokens());
    }

    @Test
    void streamedCompletionConcatenatesToTheWholeAnswer() {
        String whole = client.completions().create(completion(12)).choices().getFirst().text();
        StringBuilder streamed = new StringBuilder();
        List<String> finishReasons = new ArrayList<>();
        try (StreamResponse<Completion> s = client.completions().createStreaming(completion(12))) {
            s.stream().forEach(chunk -> chunk.choices().forEach(ch -> {
                streamed.append(ch.text());
                ch._finishReason().asKnown().ifPresent(r -> finishReasons.add(r.asString()));
            }));
        }
        assertThat(streamed.toString()).isEqualTo(whole);
        assertThat(finishReasons).hasSize(1);
    }

    @Test
    void chatAnswersWithAnAssistantMessage() {
        ChatCompletion c = client.chat().completions().create(ChatCompletionCreateParams.builder()
                .model(TestNodes.MODEL).addUserMessage("Say hello").maxCompletionTokens(6).temperature(0.0).build());
        assertThat(c.choices()).hasSize(1);
        assertThat(c.choices().getFirst().message().content()).isPresent();
        var usage = c.usage().orElseThrow();
        assertThat(usage.completionTokens()).isBetween(1L, 6L);
        assertThat(usage.totalTokens()).isEqualTo(usage.promptTokens() + usage.completionTokens());
    }

    @Test
    void chatTemplateKwargsAreAcceptedAsVllmTakesThem() {
        // The test model has no template variable by that name (ChatML fallback): the same prompt.
        ChatCompletionCreateParams p = ChatCompletionCreateParams.builder()
                .model(TestNodes.MODEL).addUserMessage("Say hello").maxCompletionTokens(2).temperature(0.0).build();
        ChatCompletion plain = client.chat().completions().create(p);
        ChatCompletion withKwargs = client.chat().completions().create(p.toBuilder()
                .putAdditionalBodyProperty("chat_template_kwargs", com.openai.core.JsonValue.from(java.util.Map.of("enable_thinking", false)))
                .build());
        assertThat(withKwargs.usage().orElseThrow().promptTokens()).isEqualTo(plain.usage().orElseThrow().promptTokens());
    }

    @Test
    void streamedChatMatchesWholeChatAndEndsWithUsage() {
        ChatCompletionCreateParams p = ChatCompletionCreateParams.builder().model(TestNodes.MODEL)
                .addSystemMessage("You are terse.").addUserMessage("Count to three").maxCompletionTokens(10)
                .temperature(0.0).seed(7).streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
                .build();
        ChatCompletion whole = client.chat().completions().create(p.toBuilder().streamOptions(java.util.Optional.empty()).build());
        StringBuilder streamed = new StringBuilder();
        List<ChatCompletionChunk> chunks = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> s = client.chat().completions().createStreaming(p)) {
            s.stream().forEach(chunk -> {
                chunks.add(chunk);
                chunk.choices().forEach(ch -> ch.delta().content().ifPresent(streamed::append));
            });
        }
        assertThat(streamed.toString()).isEqualTo(whole.choices().getFirst().message().content().orElseThrow());
        ChatCompletionChunk last = chunks.getLast();
        assertThat(last.choices()).isEmpty();
        assertThat(last.usage().orElseThrow().completionTokens())
                .isEqualTo(whole.usage().orElseThrow().completionTokens());
        assertThat(last.usage().orElseThrow().promptTokens()).isEqualTo(whole.usage().orElseThrow().promptTokens());
    }
}
