package dgr.node.api;

/** A completion prompt as the caller sent it: text to tokenize, or token ids. */
public sealed interface PromptInput {
    record Text(String text) implements PromptInput {}

    record Tokens(int[] ids) implements PromptInput {
        public Tokens {
            ids = ids.clone();
        }

        @Override
        public int[] ids() { return ids.clone(); }
    }
}
