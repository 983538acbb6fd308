package dev.webtensor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/** A safetensors file: an 8-byte little-endian header length, a JSON header, then raw little-endian data. */
final class Safetensors {
    static final ObjectMapper JSON = new ObjectMapper();

    record Entry(DType dtype, long[] shape, byte[] data) {
        double[] values() {
            return decode(dtype, data);
        }
    }

    final Map<String, Entry> tensors = new HashMap<>();
    final Map<String, String> metadata = new HashMap<>();

    Safetensors(Path path) throws IOException {
        byte[] all = Files.readAllBytes(path);
        long n = ByteBuffer.wrap(all, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (n < 2 || n > all.length - 8) {
            throw new IOException(path + ": bad header length " + n);
        }
        JsonNode header = JSON.readTree(new String(all, 8, (int) n, StandardCharsets.UTF_8));
        int base = 8 + (int) n;
        for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode v = e.getValue();
            if (e.getKey().equals("__metadata__")) {
                v.fields().forEachRemaining(m -> metadata.put(m.getKey(), m.getValue().asText()));
                continue;
            }
            long[] shape = new long[v.get("shape").size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = v.get("shape").get(i).asLong();
            }
            int from = v.get("data_offsets").get(0).asInt(), to = v.get("data_offsets").get(1).asInt();
            DType dt = DType.of(v.get("dtype").asText());
            tensors.put(e.getKey(), new Entry(dt, shape, Arrays.copyOfRange(all, base + from, base + to)));
        }
    }

    /** Raw little-endian elements of any dtype as doubles (unsigned types unsigned, bool 0 or 1). */
    static double[] decode(DType dt, byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        double[] out = new double[raw.length / dt.byteSize()];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (dt) {
                case F32 -> b.getFloat();
                case F64 -> b.getDouble();
                case F16 -> Float.float16ToFloat(b.getShort());
                case BF16 -> Float.intBitsToFloat((b.getShort() & 0xffff) << 16);
                case I64 -> b.getLong();
                case I32 -> b.getInt();
                case U32 -> Integer.toUnsignedLong(b.getInt());
                case U16 -> b.getShort() & 0xffff;
                case U64 -> {
                    long v = b.getLong(); // unsigned: the nearest double, as NumPy's float(uint64)
                    yield v >= 0 ? (double) v : (double) (v >>> 1 | (v & 1)) * 2.0;
                }
                case I16 -> b.getShort();
                case I8 -> b.get();
                case U8, BOOL -> b.get() & 0xff;
                // The vectors hold complex values as their real pairs ([..., 2] of f32/f64).
                case C64, C128 -> throw new IllegalArgumentException("a reference vector of dtype " + dt
                        + ": the vectors store complex values as real pairs");
            };
        }
        return out;
    }
}
