package dev.webtensor;

/**
 * Element types; the codes are the header's wt_dtype values (and core.DType's).
 * Java has no complex numbers: a C64 (C128) element is two floats (doubles),
 * the real part first, which is how {@link Tensor#ofComplex(float[], long...)}
 * takes them and {@link Tensor#toComplexFloatArray()} gives them back.
 */
public enum DType {
    F32(1, 4, "f32"),
    F16(2, 2, "f16"),
    BF16(3, 2, "bf16"),
    F64(4, 8, "f64"),
    I64(5, 8, "i64"),
    I32(6, 4, "i32"),
    U32(7, 4, "u32"),
    I16(8, 2, "i16"),
    I8(9, 1, "i8"),
    U8(10, 1, "u8"),
    BOOL(11, 1, "bool"),
    C64(12, 8, "c64"),
    C128(13, 16, "c128"),
    /** Held as u32 on WebGPU. */
    U16(14, 2, "u16"),
    /**
     * Not on WebGPU or CUDA. Java has no unsigned long: a u64 element is a
     * long holding its bits (read it with Long.toUnsignedString or
     * Long.compareUnsigned), which is what toLongArray gives.
     */
    U64(15, 8, "u64");

    private final int code;
    private final int size;
    private final String label;

    DType(int code, int size, String label) {
        this.code = code;
        this.size = size;
        this.label = label;
    }

    /** The wt_dtype code. */
    public int code() {
        return code;
    }

    /** Bytes per element (a complex element is both its parts). */
    public int byteSize() {
        return size;
    }

    /** The library's name: "f32", "i64", "bool", ... */
    public String label() {
        return label;
    }

    /** F32, F16, BF16 and F64; false for the complex dtypes, as Python's is_floating. */
    public boolean isFloating() {
        return this == F32 || this == F16 || this == BF16 || this == F64;
    }

    public boolean isComplex() {
        return this == C64 || this == C128;
    }

    /** The dtype of a complex dtype's parts (F32 for C64, F64 for C128); a real dtype is its own. */
    public DType part() {
        return switch (this) {
            case C64 -> F32;
            case C128 -> F64;
            default -> this;
        };
    }

    public static DType fromCode(int code) {
        for (DType d : values()) {
            if (d.code == code) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown wt_dtype code " + code);
    }

    /** By the library's name ("f32") or the safetensors name ("F32"). */
    public static DType of(String name) {
        for (DType d : values()) {
            if (d.label.equalsIgnoreCase(name)) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown dtype " + name);
    }

    @Override
    public String toString() {
        return label;
    }
}
