package dgr.node.api;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A malformed body's problem in a client's words: where (line, column) and what, without the parser's
 * internals (character codes, feature flags, source descriptions, Java type names).
 */
final class JsonSyntax {
    private static final Pattern UNRECOGNIZED = Pattern.compile("^Unrecognized token '(.*?)'");
    private static final Pattern UNEXPECTED = Pattern.compile("^Unexpected character \\('(.*?)' \\(code \\d+\\)\\)(?:: was expecting ([^(]*))?");

    private JsonSyntax() {}

    static String describe(JsonProcessingException e) {
        JsonLocation at = e.getLocation();
        String where = at == null || at.getLineNr() < 1 ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
        return "The request body is not valid JSON" + where + ": " + what(String.valueOf(e.getOriginalMessage())) + ".";
    }

    static String what(String m) {
        if (m.startsWith("Invalid UTF-8")) return "it is not valid UTF-8 (JSON request bodies must be UTF-8)";
        if (m.startsWith("Unexpected end-of-input")) return "it ends before its objects, arrays or strings are closed";
        if (m.startsWith("Trailing token")) return "more data follows the JSON value";
        if (m.startsWith("Illegal unquoted character")) return "a control character inside a string must be escaped";
        Matcher u = UNRECOGNIZED.matcher(m);
        if (u.find()) return "'" + u.group(1) + "' is not a JSON value (strings take double quotes; the literals are true, false and null)";
        Matcher c = UNEXPECTED.matcher(m);
        if (c.find()) {
            String expected = c.group(2) == null ? "" : ", expected " + c.group(2).strip();
            return "unexpected character '" + c.group(1) + "'" + expected;
        }
        return "it does not follow JSON's syntax";
    }
}
