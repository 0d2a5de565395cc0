package dgr.engine.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dgr.engine.tokenizer.Tokenizer;
import dgr.gguf.GgufFile;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Expected prompts are written out by hand from each template's semantics. */
class ChatTemplateTest {
    /** Meta-Llama-3-8B-Instruct's template (its JSON "\n\n" are real newlines inside the Jinja strings). */
    static final String LLAMA3 = "{% set loop_messages = messages %}{% for message in loop_messages %}"
            + "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
            + "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
            + "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
            + "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

    /** Llama-2-7b-chat-hf's template (here "\\n" is a Jinja escape, as in the JSON). */
    static final String LLAMA2 = "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
            + "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
            + "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
            + "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
            + "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
            + "{% if loop.index0 == 0 and system_message != false %}"
            + "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
            + "{% else %}{% set content = message['content'] %}{% endif %}"
            + "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
            + "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}"
            + "{% endfor %}";

    /** Mistral-7B-Instruct-v0.1's template. */
    static final String MISTRAL = "{{ bos_token }}{% for message in messages %}"
            + "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
            + "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
            + "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
            + "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}"
            + "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";

    @Test
    void llama3HeadersTrimmedContentAndBosOnTheFirstMessage() {
        String out = ChatTemplate.of(LLAMA3).render(
                List.of(ChatMessage.system("You are a bot."), ChatMessage.user("  Hi there!\n")),
                true, "<|begin_of_text|>", "<|eot_id|>");
        assertThat(out).isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a bot.<|eot_id|>"
                + "<|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n");
    }

    @Test
    void llama3WithoutGenerationPromptEndsAfterTheLastTurn() {
        String out = ChatTemplate.of(LLAMA3).render(List.of(ChatMessage.user("Hi")), false, "<|begin_of_text|>", "");
        assertThat(out).isEqualTo("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
    }

    @Test
    void qwenChatMlTemplateFromTheGgufAddsTheDefaultSystemPrompt() throws URISyntaxException {
        Path gguf = Path.of(getClass().getResource("/conformance/tokenizer/ggml-vocab-qwen2.gguf").toURI());
        Tokenizer tok;
        try (GgufFile f = GgufFile.open(gguf)) {
            tok = Tokenizer.fromMetadata(f.metadata());
        }
        ChatTemplate t = ChatTemplate.forModel(tok.chatTemplate());
        assertThat(t.isFallback()).isFalse();
        String out = t.render(List.of(ChatMessage.user("Hello")), true, "", "<|endoftext|>");
        assertThat(out).isEqualTo("<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
                + "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
        String withSystem = t.render(List.of(ChatMessage.system("Be terse."), ChatMessage.user("Hello")), false, "", "");
        assertThat(withSystem).isEqualTo("<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n");
        int[] ids = tok.encode(out, false, true);
        assertThat(tok.piece(ids[0])).isEqualTo("<|im_start|>");
    }

    @Test
    void llama2FoldsTheSystemPromptIntoTheFirstInstruction() {
        String out = ChatTemplate.of(LLAMA2).render(List.of(ChatMessage.system("Be brief."), ChatMessage.user(" Hi "),
                ChatMessage.assistant("Hello!\n"), ChatMessage.user(" Bye ")), true, "<s>", "</s>");
        // strip() applies to the folded text: the user's leading space stays after the system block.
        assertThat(out).isEqualTo("<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\n Hi [/INST] Hello! </s><s>[INST] Bye [/INST]");
    }

    @Test
    void mistralInstructWrapsUserTurnsAndEndsAssistantTurnsWithEos() {
        String out = ChatTemplate.of(MISTRAL).render(List.of(ChatMessage.user("Hi"), ChatMessage.assistant("Hello!"),
                ChatMessage.user("Bye")), true, "<s>", "</s>");
        assertThat(out).isEqualTo("<s>[INST] Hi [/INST]Hello!</s> [INST] Bye [/INST]");
    }

    @Test
    void aTemplatesRaiseExceptionBecomesAChatTemplateExceptionWithItsMessage() {
        ChatTemplate t = ChatTemplate.of(MISTRAL);
        assertThatThrownBy(() -> t.render(List.of(ChatMessage.assistant("first")), true, "<s>", "</s>"))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("Conversation roles must alternate");
        assertThatThrownBy(() -> t.render(List.of(ChatMessage.user("u"), ChatMessage.system("sys")), true, "<s>", "</s>"))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("Only user and assistant roles are supported!");
    }

    @Test
    void aMissingPythonStringMethodIsNamedNotRenderedAsNothing() {
        ChatTemplate t = ChatTemplate.of("{% for m in messages %}{% if m['content'].zfill(3) %}cmd{% endif %}{% endfor %}");
        assertThatThrownBy(() -> t.render(List.of(ChatMessage.user("/help")), true, "", ""))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("zfill");
    }

    @Test
    void pythonStringMethodsMeanWhatTheyMeanInPython() {
        // split takes a literal separator (Java's takes a regex) and keeps empty pieces; strip and
        // friends take a set of characters; startswith, endswith, upper, title exist at all.
        String src = "{% set c = messages[0].content %}{{ c.split('.')|length }}|{{ c.split('.')[-1] }}|{{ c.lstrip('a.') }}|"
                + "{{ c.rstrip('.c') }}|{{ c.strip('a.c') }}|{{ c.startswith('a.') }}|{{ c.endswith('x') }}|{{ c.upper() }}|"
                + "{{ ' a  b '.split()|length }}|{{ 'hello world'.title() }}|{{ messages[::-1][0].content }}";
        String out = ChatTemplate.of(src).render(List.of(ChatMessage.user("a..b.c"), ChatMessage.user("last")), false, "", "");
        assertThat(out).isEqualTo("4|c|b.c|a..b|b|true|false|A..B.C|2|Hello World|last");
    }

    @Test
    void unknownFiltersTestsAndTagsAreNamed() {
        assertThatThrownBy(() -> ChatTemplate.of("{{ messages | tojson_pretty }}{% if x is nosuchtest %}{% endif %}"))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("filter 'tojson_pretty'")
                .hasMessageContaining("test 'nosuchtest'");
        // A '|' inside a string literal is text, not a filter.
        assertThat(ChatTemplate.of("{{ '<|im_start|>' }}").render(List.of(), false, "", "")).isEqualTo("<|im_start|>");
        ChatTemplate generation = ChatTemplate.of("{% generation %}{{ messages[0].content }}{% endgeneration %}");
        assertThatThrownBy(() -> generation.render(List.of(ChatMessage.user("x")), false, "", ""))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("generation");
    }

    @Test
    void aModelWithoutTemplateFallsBackToChatMlAndSaysSo() {
        ChatTemplate t = ChatTemplate.forModel(Optional.empty());
        assertThat(t.isFallback()).isTrue();
        assertThat(t.source()).isEqualTo(ChatTemplate.CHATML);
        assertThat(t.render(List.of(ChatMessage.system("S"), ChatMessage.user("U")), true, "", ""))
                .isEqualTo("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
        assertThat(ChatTemplate.forModel(Optional.of("  ")).isFallback()).isTrue();
    }

    @Test
    void blockTagsSwallowTheirNewlineAndIndentLikeHuggingFace() {
        String t = "{% for m in messages %}\n    {{ m.role }}:{{ m.content }};\n{% endfor %}\n";
        assertThat(ChatTemplate.of(t).render(List.of(ChatMessage.user("a"), ChatMessage.assistant("b")), false, "", ""))
                .isEqualTo("    user:a;\n    assistant:b;\n");
    }

    /**
     * Qwen3's template (its tokenizer_config.json, as Qwen's GGUFs carry it): a namespace counter,
     * reversed iteration, Python string methods ({@code startswith}, {@code split}, {@code lstrip},
     * {@code strip}) and thinking blocks. Expected texts rendered by Python's jinja2 3.1.6 in
     * transformers' sandbox settings.
     */
    @Test
    void qwen3TemplateRendersAsJinja2Does() throws Exception {
        ChatTemplate t = resourceTemplate("qwen3.jinja");
        assertThat(t.render(List.of(ChatMessage.user("Hi, robot!")), true, "", ""))
                .isEqualTo("<|im_start|>user\nHi, robot!<|im_end|>\n<|im_start|>assistant\n");
        assertThat(t.render(List.of(ChatMessage.system("You are a helpful assistant."), ChatMessage.user("Hello")), true, "", ""))
                .isEqualTo("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
        assertThat(t.render(List.of(ChatMessage.user("What's 2+2?"), ChatMessage.assistant("<think>\nadd\n</think>\n\n4"),
                ChatMessage.user("Thanks!")), true, "", ""))
                .isEqualTo("<|im_start|>user\nWhat's 2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n"
                        + "<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n");
        assertThat(t.render(List.of(ChatMessage.user("Hello"), ChatMessage.assistant("Hi there!")), false, "", ""))
                .isEqualTo("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHi there!<|im_end|>\n");
        // chat_template_kwargs: Qwen3's switch for answering without thinking.
        assertThat(t.render(List.of(ChatMessage.user("Hello")), true, "", "", java.util.Map.of("enable_thinking", false)))
                .isEqualTo("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
        assertThatThrownBy(() -> t.render(List.of(ChatMessage.user("Hello")), true, "", "", java.util.Map.of("messages", List.of())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'messages'");
    }

    /** Expected texts from Python's jinja2 3.1.6 with trim_blocks and lstrip_blocks. */
    @Test
    void whitespaceControlOnExpressionTagsAndCommentsStripsAsJinja2Does() {
        assertThat(ChatTemplate.of("a  \n  {{- 'x' }}").render(List.of(), false, "", "")).isEqualTo("ax");
        assertThat(ChatTemplate.of("a  \n  {{- 'x' -}}  \n b").render(List.of(), false, "", "")).isEqualTo("axb");
        assertThat(ChatTemplate.of("{% if true %}\n    {{- 'x' }}\n{% endif %}").render(List.of(), false, "", "")).isEqualTo("x\n");
        assertThat(ChatTemplate.of("{%- if true %}\n        {{- 'x' }}\n{%- endif %}|").render(List.of(), false, "", "")).isEqualTo("x|");
        assertThat(ChatTemplate.of("{{ 'a' -}}\n\n").render(List.of(), false, "", "")).isEqualTo("a");
        assertThat(ChatTemplate.of("a\n\n{#- c #}\nb").render(List.of(), false, "", "")).isEqualTo("ab");
        assertThat(ChatTemplate.of("a {# c -#}\n\n b").render(List.of(), false, "", "")).isEqualTo("a b");
        assertThat(ChatTemplate.of("a\n  {# c #}\nb").render(List.of(), false, "", "")).isEqualTo("a\nb");
    }

    /**
     * Llama 3.1 / 3.2's template (as Meta's GGUFs carry it): {@code {{-} throughout, a system
     * header dated by {@code strftime_now("%d %b %Y")}, {@code messages[1:]},
     * {@code 'tool_calls' in message}. Expected texts from Python's jinja2 3.1.6 (dated 26 Jul 2024,
     * the clock fixed to that day here).
     */
    @Test
    void llama32TemplateRendersAsJinja2Does() throws Exception {
        ChatTemplate t = resourceTemplate("llama3.2.jinja").withClock(day(2024, 7, 26));
        String header = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
                + "Today Date: 26 Jul 2024\n\n";
        assertThat(t.render(List.of(ChatMessage.user("Hi")), true, "<|begin_of_text|>", "<|eot_id|>"))
                .isEqualTo(header + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(t.render(List.of(ChatMessage.system(" Be brief. "), ChatMessage.user(" Hi "), ChatMessage.assistant("Hello"),
                ChatMessage.user("Bye")), false, "<|begin_of_text|>", "<|eot_id|>"))
                .isEqualTo(header + "Be brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        + "<|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>");
    }

    /**
     * Gemma 2/3's template (the shape their GGUFs carry): {@code -%}} on every statement tag, the
     * system turn folded into the first user turn, {@code is string}, a Python conditional
     * expression, roles checked to alternate. Expected texts from Python's jinja2 3.1.6.
     */
    @Test
    void gemmaTemplateRendersAsJinja2Does() throws Exception {
        ChatTemplate t = resourceTemplate("gemma3.jinja");
        assertThat(t.render(List.of(ChatMessage.user(" Hi ")), true, "<bos>", "<eos>"))
                .isEqualTo("<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");
        assertThat(t.render(List.of(ChatMessage.system("Be brief."), ChatMessage.user("Hi"), ChatMessage.assistant("Hello!"),
                ChatMessage.user("Bye")), true, "<bos>", "<eos>"))
                .isEqualTo("<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
                        + "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n");
        assertThatThrownBy(() -> t.render(List.of(ChatMessage.assistant("x")), true, "<bos>", "<eos>"))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("Conversation roles must alternate");
    }

    /**
     * {@code strftime_now}, as transformers and llama.cpp's server define it: defined, the current
     * time (a fixed clock in tests) in Python's notation. Mistral Small 3.x calls it unconditionally.
     */
    @Test
    void strftimeNowFormatsTheClocksDateInPythonNotation() {
        ChatTemplate t = ChatTemplate.of("{%- set today = strftime_now('%Y-%m-%d') %}{{ today }}|{{ strftime_now('%d %b %Y, %A %B %y %H:%M %%') }}|"
                + "{{ strftime_now is defined }}").withClock(day(2025, 3, 7));
        assertThat(t.render(List.of(), false, "", "")).isEqualTo("2025-03-07|07 Mar 2025, Friday March 25 00:00 %|true");
        String today = java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString();
        assertThat(ChatTemplate.of("{{ strftime_now('%Y-%m-%d') }}").render(List.of(), false, "", "")).isIn(today,
                java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString());
        assertThatThrownBy(() -> ChatTemplate.of("{{ strftime_now('%Q') }}").render(List.of(), false, "", ""))
                .isInstanceOf(ChatTemplateException.class).hasMessageContaining("%Q");
    }

    private static java.time.Clock day(int y, int m, int d) {
        return java.time.Clock.fixed(java.time.LocalDate.of(y, m, d).atStartOfDay(java.time.ZoneOffset.UTC).toInstant(), java.time.ZoneOffset.UTC);
    }

    /**
     * DeepSeek-R1-Distill's template (as the distilled Llama and Qwen GGUFs carry it): a
     * four-member namespace, {@code content.split('</think>')[-1]} to drop the reasoning from
     * history, {@code is none}. Expected texts from Python's jinja2 3.1.6.
     */
    @Test
    void deepSeekR1TemplateRendersAsJinja2Does() throws Exception {
        ChatTemplate t = resourceTemplate("deepseek-r1.jinja");
        assertThat(t.render(List.of(ChatMessage.system("Be brief."), ChatMessage.user("2+2?"), ChatMessage.assistant("<think>\nadd\n</think>\n\n4"),
                ChatMessage.user("Thanks")), true, "<｜begin▁of▁sentence｜>", ""))
                .isEqualTo("<｜begin▁of▁sentence｜>Be brief.<｜User｜>2+2?<｜Assistant｜>\n\n4<｜end▁of▁sentence｜><｜User｜>Thanks<｜Assistant｜><think>\n");
        assertThat(t.render(List.of(ChatMessage.user("Hi")), false, "<B>", "")).isEqualTo("<B><｜User｜>Hi");
    }

    /** A template from {@code src/test/resources/chat/}. */
    private static ChatTemplate resourceTemplate(String name) throws java.io.IOException {
        try (java.io.InputStream in = ChatTemplateTest.class.getResourceAsStream("/chat/" + name)) {
            return ChatTemplate.of(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        }
    }
}
