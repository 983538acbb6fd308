package dev.webtensor;

import java.util.Objects;

/**
 * One named attribute of an op call (a wt_attr). The generated op methods make
 * these; {@link Webtensor#op} takes them for ops called by name (plugins, or
 * internal ops). The {@code ofX} factories return null for a null value, and a
 * null attribute is left out of the call, so the library applies its default.
 */
public record Attr(String name, Kind kind, Object value) {
    /** wt_attr_kind; the code is the header's value. */
    public enum Kind {
        INT(1), FLOAT(2), BOOL(3), STRING(4), INTS(5), FLOATS(6), DTYPE(7);

        final int code;

        Kind(int code) {
            this.code = code;
        }
    }

    public Attr {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(value, "value");
    }

    public static Attr of(String name, long v) {
        return new Attr(name, Kind.INT, v);
    }

    public static Attr of(String name, double v) {
        return new Attr(name, Kind.FLOAT, v);
    }

    public static Attr of(String name, boolean v) {
        return new Attr(name, Kind.BOOL, v);
    }

    public static Attr of(String name, String v) {
        return new Attr(name, Kind.STRING, v);
    }

    public static Attr of(String name, long... v) {
        return new Attr(name, Kind.INTS, v.clone());
    }

    public static Attr of(String name, double... v) {
        return new Attr(name, Kind.FLOATS, v.clone());
    }

    public static Attr of(String name, DType v) {
        return new Attr(name, Kind.DTYPE, v);
    }

    static Attr ofInt(String name, Long v) {
        return v == null ? null : new Attr(name, Kind.INT, v);
    }

    static Attr ofFloat(String name, Double v) {
        return v == null ? null : new Attr(name, Kind.FLOAT, v);
    }

    static Attr ofBool(String name, Boolean v) {
        return v == null ? null : new Attr(name, Kind.BOOL, v);
    }

    static Attr ofString(String name, String v) {
        return v == null ? null : new Attr(name, Kind.STRING, v);
    }

    static Attr ofInts(String name, long[] v) {
        return v == null ? null : new Attr(name, Kind.INTS, v);
    }

    static Attr ofFloats(String name, double[] v) {
        return v == null ? null : new Attr(name, Kind.FLOATS, v);
    }

    static Attr ofDType(String name, DType v) {
        return v == null ? null : new Attr(name, Kind.DTYPE, v);
    }
}
