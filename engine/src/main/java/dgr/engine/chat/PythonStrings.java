package dgr.engine.chat;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Python's string methods for chat templates. Hugging Face renders templates with Python's
 * jinja2, where a string is a Python {@code str}: Qwen3's template calls
 * {@code content.startswith(...)}, {@code .split('</think>')[-1].lstrip('\n')} and
 * {@code .strip('\n')}. Jinjava calls Java's {@code String} methods instead, which lack most of
 * these names and whose {@code split} takes a regular expression. This resolver answers those
 * calls on strings with Python's meaning and leaves every other call to Jinjava's own resolver.
 */
final class PythonStrings extends ELResolver {

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(base instanceof String s) || method == null) return null;
        Object[] a = params == null ? new Object[0] : params;
        Object result = switch (method.toString()) {
            case "startswith" -> a.length == 1 ? s.startsWith(str(a[0])) : null;
            case "endswith" -> a.length == 1 ? s.endsWith(str(a[0])) : null;
            case "strip" -> a.length == 0 || a[0] == null ? s.strip() : a.length == 1 ? rstrip(lstrip(s, str(a[0])), str(a[0])) : null;
            case "lstrip" -> a.length == 0 || a[0] == null ? s.stripLeading() : a.length == 1 ? lstrip(s, str(a[0])) : null;
            case "rstrip" -> a.length == 0 || a[0] == null ? s.stripTrailing() : a.length == 1 ? rstrip(s, str(a[0])) : null;
            case "split" -> a.length == 0 || a[0] == null ? whitespaceSplit(s) : a.length == 1 ? split(s, str(a[0])) : null;
            case "upper" -> a.length == 0 ? s.toUpperCase(Locale.ROOT) : null;
            case "lower" -> a.length == 0 ? s.toLowerCase(Locale.ROOT) : null;
            case "title" -> a.length == 0 ? title(s) : null;
            case "capitalize" -> a.length == 0 ? (s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT)) : null;
            default -> null;
        };
        if (result != null) context.setPropertyResolved(true);
        return result;
    }

    private static String str(Object o) {
        return String.valueOf(o);
    }

    /** {@code s.lstrip(chars)}: drops leading characters that occur in {@code chars}. */
    static String lstrip(String s, String chars) {
        int i = 0;
        while (i < s.length() && chars.indexOf(s.charAt(i)) >= 0) i++;
        return s.substring(i);
    }

    static String rstrip(String s, String chars) {
        int e = s.length();
        while (e > 0 && chars.indexOf(s.charAt(e - 1)) >= 0) e--;
        return s.substring(0, e);
    }

    /** {@code s.split(sep)}: on the literal separator, keeping empty pieces; Python refuses an empty one. */
    static List<String> split(String s, String sep) {
        if (sep.isEmpty()) throw new IllegalArgumentException("empty separator");
        List<String> out = new ArrayList<>();
        int from = 0;
        for (int at; (at = s.indexOf(sep, from)) >= 0; from = at + sep.length()) out.add(s.substring(from, at));
        out.add(s.substring(from));
        return out;
    }

    /** {@code s.split()}: runs of whitespace separate, no empty pieces. */
    static List<String> whitespaceSplit(String s) {
        List<String> out = new ArrayList<>();
        for (String p : s.strip().split("\\s+")) if (!p.isEmpty()) out.add(p);
        return out;
    }

    private static String title(String s) {
        StringBuilder b = new StringBuilder(s.length());
        boolean start = true;
        for (char c : s.toCharArray()) {
            b.append(start ? Character.toUpperCase(c) : Character.toLowerCase(c));
            start = !Character.isLetter(c);
        }
        return b.toString();
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {}
}
