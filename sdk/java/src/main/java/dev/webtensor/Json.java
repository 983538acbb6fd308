package dev.webtensor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the JSON the library returns (device info, the manifest, dataset and
 * ONNX descriptions, tuning decisions) into unmodifiable Maps (in key order),
 * Lists, Strings, Longs (integers), Doubles, Booleans and nulls. It is a
 * reader for what Go's encoding/json writes, not a general JSON library: the
 * JDK has none, and the SDK takes no dependencies.
 */
final class Json {
    private final String s;
    private final String what;
    private int pos;

    private Json(String s, String what) {
        this.s = s;
        this.what = what;
    }

    /** The value s holds; what names the source in errors (the ABI function). */
    static Object parse(String s, String what) {
        Json j = new Json(s, what);
        Object v = j.value();
        j.space();
        if (j.pos != s.length()) {
            throw j.error("trailing text");
        }
        return v;
    }

    /** parse, for a source that holds an object. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String s, String what) {
        Object v = parse(s, what);
        if (!(v instanceof Map)) {
            throw new IllegalStateException(what + ": expected a JSON object, got " + s);
        }
        return (Map<String, Object>) v;
    }

    /** s as a JSON string literal (for the specs and options the library takes as JSON). */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private IllegalStateException error(String problem) {
        return new IllegalStateException(what + ": " + problem + " at offset " + pos + " of its JSON");
    }

    private void space() {
        while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
            pos++;
        }
    }

    private boolean take(char c) {
        space();
        if (pos < s.length() && s.charAt(pos) == c) {
            pos++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!take(c)) {
            throw error("expected '" + c + "'");
        }
    }

    private Object value() {
        space();
        if (pos >= s.length()) {
            throw error("unexpected end");
        }
        char c = s.charAt(pos);
        return switch (c) {
            case '{' -> obj();
            case '[' -> array();
            case '"' -> string();
            case 't' -> word("true", Boolean.TRUE);
            case 'f' -> word("false", Boolean.FALSE);
            case 'n' -> word("null", null);
            default -> number();
        };
    }

    private Object word(String w, Object v) {
        if (!s.startsWith(w, pos)) {
            throw error("unexpected character");
        }
        pos += w.length();
        return v;
    }

    private Map<String, Object> obj() {
        expect('{');
        Map<String, Object> m = new LinkedHashMap<>();
        if (take('}')) {
            return Collections.unmodifiableMap(m);
        }
        do {
            space();
            String k = string();
            expect(':');
            m.put(k, value());
        } while (take(','));
        expect('}');
        return Collections.unmodifiableMap(m);
    }

    private List<Object> array() {
        expect('[');
        List<Object> l = new ArrayList<>();
        if (take(']')) {
            return Collections.unmodifiableList(l);
        }
        do {
            l.add(value());
        } while (take(','));
        expect(']');
        return Collections.unmodifiableList(l);
    }

    private String string() {
        if (pos >= s.length() || s.charAt(pos) != '"') {
            throw error("expected a string");
        }
        pos++;
        StringBuilder b = new StringBuilder();
        while (pos < s.length() && s.charAt(pos) != '"') {
            char c = s.charAt(pos++);
            if (c != '\\' || pos >= s.length()) {
                b.append(c);
                continue;
            }
            char e = s.charAt(pos++);
            switch (e) {
                case 'n' -> b.append('\n');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'u' -> {
                    b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> b.append(e); // \" \\ \/
            }
        }
        expect('"');
        return b.toString();
    }

    private Object number() {
        int start = pos;
        while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) {
            pos++;
        }
        String n = s.substring(start, pos);
        if (n.isEmpty()) {
            throw error("unexpected character");
        }
        try {
            return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
        } catch (NumberFormatException e) {
            // An integer past int64 (a uint64 counter): exact enough as a double.
            return Double.parseDouble(n);
        }
    }
}
