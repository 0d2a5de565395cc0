package dgr.gguf;

/** A GGUF file (or a value inside it) is malformed or unsupported; the message says where and why. */
public class GgufFormatException extends RuntimeException {
    public GgufFormatException(String message) {
        super(message);
    }

    public GgufFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
