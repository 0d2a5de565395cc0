package dgr.engine;

import dgr.gguf.Metadata;

/**
 * Facts about the loaded model that callers above the engine need (tokenizer and chat template are
 * built from {@code metadata}).
 */
public record ModelInfo(String architecture, String name, int vocabSize, int contextLength, int nLayers,
                        int nEmbd, long parameterCount, Metadata metadata) {}
