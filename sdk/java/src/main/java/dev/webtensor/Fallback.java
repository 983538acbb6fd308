package dev.webtensor;

import java.util.ArrayList;
import java.util.List;

/**
 * Calls of one op on one device that did not run there as asked: kind "cpu"
 * when the op ran on the CPU (the device has no kernel for it), "host" when
 * the device's kernel did part of the op on the host, reason saying what
 * (docs/ops.md lists those). See {@link Webtensor#fallbacks}.
 */
public record Fallback(String device, String op, long count, String kind, String reason) {
    /** Kind of an op that ran on the CPU instead of its device. */
    public static final String CPU = "cpu";
    /** Kind of a device kernel that did declared host-side work. */
    public static final String HOST = "host";

    /**
     * Reads wt_fallbacks_json's array. It is flat (objects of strings and
     * integers, written by Go's encoding/json), so this reader takes only that
     * shape rather than being a JSON library; entries of libraries from before
     * the kind field are CPU fallbacks.
     */
    static List<Fallback> parse(String json) {
        Reader r = new Reader(json);
        List<Fallback> out = new ArrayList<>();
        r.expect('[');
        while (!r.take(']')) {
            r.take(',');
            r.expect('{');
            String device = "", op = "", kind = CPU, reason = "";
            long count = 0;
            while (!r.take('}')) {
                r.take(',');
                String key = r.string();
                r.expect(':');
                switch (key) {
                    case "device" -> device = r.string();
                    case "op" -> op = r.string();
                    case "kind" -> kind = r.string();
                    case "reason" -> reason = r.string();
                    case "count" -> count = r.integer();
                    default -> r.skip();
                }
            }
            out.add(new Fallback(device, op, count, kind, reason));
        }
        return List.copyOf(out);
    }

    private static final class Reader {
        private final String s;
        private int pos;

        Reader(String s) {
            this.s = s;
        }

        private void space() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        boolean take(char c) {
            space();
            if (pos < s.length() && s.charAt(pos) == c) {
                pos++;
                return true;
            }
            return false;
        }

        void expect(char c) {
            if (!take(c)) {
                throw new IllegalStateException("wt_fallbacks_json: expected '" + c + "' at offset " + pos + " of " + s);
            }
        }

        String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (pos < s.length() && s.charAt(pos) != '"') {
                char c = s.charAt(pos++);
                if (c == '\\' && pos < s.length()) {
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
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
            expect('"');
            return b.toString();
        }

        long integer() {
            space();
            int start = pos;
            while (pos < s.length() && "-0123456789".indexOf(s.charAt(pos)) >= 0) {
                pos++;
            }
            return Long.parseLong(s.substring(start, pos));
        }

        /** Skips any value (a field added later): a string, a scalar, or an array or object to its end. */
        void skip() {
            space();
            int depth = 0;
            while (pos < s.length()) {
                char c = s.charAt(pos);
                if (c == '"') {
                    string();
                    continue;
                }
                if (depth == 0 && (c == ',' || c == '}' || c == ']')) {
                    return;
                }
                if (c == '[' || c == '{') {
                    depth++;
                } else if (c == ']' || c == '}') {
                    depth--;
                }
                pos++;
            }
        }
    }
}
