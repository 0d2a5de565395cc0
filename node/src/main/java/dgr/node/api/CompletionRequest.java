package dgr.node.api;

/** A checked {@code POST /v1/completions} body. */
public record CompletionRequest(GenerationParams params, PromptInput prompt) {}
