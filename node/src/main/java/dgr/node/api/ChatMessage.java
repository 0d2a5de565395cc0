package dgr.node.api;

/** One message of a chat conversation: its role and its text (parts already joined). */
public record ChatMessage(String role, String content) {}
