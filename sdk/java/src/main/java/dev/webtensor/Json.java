package dev.webtensor;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the JSON the library returns (device info, the manifest, dataset and
 * ONNX descriptions, tuning decisions, wt_call's results) into unmodifiable
 * Maps (in key order), Lists, Strings, Longs (integers), Doubles, Booleans and
 * nulls, and writes wt_call's arguments ({@link #write}). It is a reader for
 * what Go's encoding/json writes and a writer for what the runtime reads, not
 * a general JSON library: the JDK has none, and the SDK takes no dependencies.
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

    /**
     * v as JSON, for wt_call's arguments: a Map's null value is null (an
     * argument's null is the runtime's default; inside one, as an ONNX
     * layout's empty optional, it is what the argument reads); a NaN or
     * infinite double is the string "nan", "inf" or "-inf" (JSON has no such
     * numbers); a Tensor, a runtime object, a Graph or a DataLoader over a
     * NativeDataset is its handle (a closed one throws here); long[], int[],
     * double[] and Collections are lists.
     */
    static String write(Object v) {
        StringBuilder b = new StringBuilder();
        write(b, v, "arguments");
        return b.toString();
    }

    /** where names v in errors ("texts[2]"): a list's null element is one (the runtime would read it as 0 or ""). */
    private static void write(StringBuilder b, Object v, String where) {
        switch (v) {
            case null -> throw new IllegalArgumentException(where + " is null");
            case String s -> b.append(quote(s));
            case Boolean x -> b.append(x.booleanValue());
            case Double x -> number(b, x);
            case Float x -> number(b, x.doubleValue());
            case BigInteger x -> b.append(x); // a uint64 past Long.MAX_VALUE (a loader's seed)
            case Number x -> b.append(x.longValue()); // Long, Integer, Short, Byte
            case Tensor t -> b.append(t.handle());
            case NativeObject o -> b.append(o.handle());
            case Graph g -> b.append(g.handle());
            case DataLoader<?> l -> b.append(l.nativeHandle());
            case Map<?, ?> m -> {
                b.append('{');
                String sep = "";
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    String k = e.getKey().toString();
                    b.append(sep).append(quote(k)).append(':');
                    if (e.getValue() == null) {
                        b.append("null");
                    } else {
                        write(b, e.getValue(), k);
                    }
                    sep = ",";
                }
                b.append('}');
            }
            case Collection<?> c -> {
                b.append('[');
                int i = 0;
                for (Object x : c) {
                    b.append(i == 0 ? "" : ",");
                    write(b, x, where + "[" + i++ + "]");
                }
                b.append(']');
            }
            case long[] a -> write(b, Arrays.stream(a).boxed().toList(), where);
            case int[] a -> write(b, Arrays.stream(a).boxed().toList(), where);
            case double[] a -> write(b, Arrays.stream(a).boxed().toList(), where);
            default -> throw new IllegalArgumentException(where + ": cannot write a " + v.getClass().getName() + " as JSON");
        }
    }

    private static void number(StringBuilder b, double x) {
        if (Double.isNaN(x)) {
            b.append("\"nan\"");
        } else if (Double.isInfinite(x)) {
            b.append(x > 0 ? "\"inf\"" : "\"-inf\"");
        } else if (x == Math.rint(x) && Math.abs(x) < 1e15) {
            b.append((long) x); // 2.0 as 2, so an integer argument takes it too
        } else {
            b.append(x);
        }
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
