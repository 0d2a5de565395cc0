package dgr.node.api;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * OpenAI's response objects for one endpoint: the whole answer, and the chunks of a stream. The two
 * endpoints differ only in object names and in where the text goes ({@code text} vs
 * {@code message}/{@code delta}).
 */
public sealed interface ResponseFormat {
    JsonNodeFactory F = JsonNodeFactory.instance;

    /** Prefix of response ids. */
    String idPrefix();

    ObjectNode complete(String id, long created, String model, String text, String finishReason, Usage usage);

    /** The chunk that opens a stream, or null when the format has none. */
    ObjectNode opening(String id, long created, String model);

    ObjectNode delta(String id, long created, String model, String text);

    ObjectNode finish(String id, long created, String model, String finishReason);

    /** With {@code stream_options.include_usage}: the last chunk, no choices, the usage. */
    default ObjectNode usageChunk(String id, long created, String model, Usage usage) {
        ObjectNode o = header(id, chunkObject(), created, model);
        o.putArray("choices");
        o.set("usage", usage(usage));
        return o;
    }

    String chunkObject();

    static ObjectNode header(String id, String object, long created, String model) {
        ObjectNode o = F.objectNode();
        o.put("id", id);
        o.put("object", object);
        o.put("created", created);
        o.put("model", model);
        return o;
    }

    static ObjectNode usage(Usage u) {
        ObjectNode o = F.objectNode();
        o.put("prompt_tokens", u.promptTokens());
        o.put("completion_tokens", u.completionTokens());
        o.put("total_tokens", u.totalTokens());
        o.putObject("prompt_tokens_details").put("cached_tokens", u.cachedTokens());
        if (u.recomputedTokens() > 0) o.put("recomputed_tokens", u.recomputedTokens());
        return o;
    }

    /** {@code POST /v1/completions}. */
    record TextCompletion() implements ResponseFormat {
        @Override
        public String idPrefix() { return "cmpl-"; }

        @Override
        public String chunkObject() { return "text_completion"; }

        @Override
        public ObjectNode complete(String id, long created, String model, String text, String finishReason,
                                   Usage usage) {
            ObjectNode o = header(id, "text_completion", created, model);
            o.putArray("choices").add(choice(text, finishReason));
            o.set("usage", usage(usage));
            return o;
        }

        @Override
        public ObjectNode opening(String id, long created, String model) { return null; }

        @Override
        public ObjectNode delta(String id, long created, String model, String text) {
            ObjectNode o = header(id, "text_completion", created, model);
            o.putArray("choices").add(choice(text, null));
            return o;
        }

        @Override
        public ObjectNode finish(String id, long created, String model, String finishReason) {
            ObjectNode o = header(id, "text_completion", created, model);
            o.putArray("choices").add(choice("", finishReason));
            return o;
        }

        private static ObjectNode choice(String text, String finishReason) {
            ObjectNode c = F.objectNode();
            c.put("index", 0);
            c.put("text", text);
            c.putNull("logprobs");
            c.put("finish_reason", finishReason);
            return c;
        }
    }

    /** {@code POST /v1/chat/completions}. */
    record ChatCompletion() implements ResponseFormat {
        @Override
        public String idPrefix() { return "chatcmpl-"; }

        @Override
        public String chunkObject() { return "chat.completion.chunk"; }

        @Override
        public ObjectNode complete(String id, long created, String model, String text, String finishReason,
                                   Usage usage) {
            ObjectNode o = header(id, "chat.completion", created, model);
            ObjectNode c = o.putArray("choices").addObject();
            c.put("index", 0);
            ObjectNode m = c.putObject("message");
            m.put("role", "assistant");
            m.put("content", text);
            m.putNull("refusal");
            c.putNull("logprobs");
            c.put("finish_reason", finishReason);
            o.set("usage", usage(usage));
            return o;
        }

        @Override
        public ObjectNode opening(String id, long created, String model) {
            ObjectNode o = header(id, chunkObject(), created, model);
            ObjectNode delta = choice(o, null);
            delta.put("role", "assistant");
            delta.put("content", "");
            return o;
        }

        @Override
        public ObjectNode delta(String id, long created, String model, String text) {
            ObjectNode o = header(id, chunkObject(), created, model);
            choice(o, null).put("content", text);
            return o;
        }

        @Override
        public ObjectNode finish(String id, long created, String model, String finishReason) {
            ObjectNode o = header(id, chunkObject(), created, model);
            choice(o, finishReason);
            return o;
        }

        /** Adds the single choice and returns its (empty) delta. */
        private static ObjectNode choice(ObjectNode chunk, String finishReason) {
            ObjectNode c = chunk.putArray("choices").addObject();
            c.put("index", 0);
            ObjectNode delta = c.putObject("delta");
            c.putNull("logprobs");
            c.put("finish_reason", finishReason);
            return delta;
        }
    }
}
