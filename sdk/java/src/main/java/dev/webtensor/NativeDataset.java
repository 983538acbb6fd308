package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A dataset the library reads (a wt_dataset: .npy, .npz, safetensors,
 * Parquet, image folders, tensors), made by {@link Data}: a record is one
 * new tensor per field. Close it (loaders made from it keep it alive); a
 * Cleaner frees a dropped one.
 */
public final class NativeDataset extends NativeObject implements Dataset<List<Tensor>> {
    private final long size;
    private final List<String> fields, dtypes;
    private final List<long[]> shapes;
    private final List<String> classes;

    @SuppressWarnings("unchecked")
    NativeDataset(long handle) {
        super(handle, Abi.DATASET_FREE, "dataset");
        Map<String, Object> info = Json.object(
                Native.readString((buf, cap, needed) -> (int) Abi.DATASET_INFO_JSON.invokeExact(handle, buf, cap, needed)),
                "wt_dataset_info_json");
        this.size = (Long) info.get("len");
        List<String> f = new ArrayList<>(), d = new ArrayList<>();
        List<long[]> s = new ArrayList<>();
        for (Object o : (List<Object>) info.get("fields")) {
            Map<String, Object> field = (Map<String, Object>) o;
            f.add((String) field.get("name"));
            d.add((String) field.get("dtype"));
            s.add(((List<Object>) field.get("shape")).stream().mapToLong(x -> (Long) x).toArray());
        }
        this.fields = List.copyOf(f);
        this.dtypes = List.copyOf(d);
        this.shapes = List.copyOf(s);
        Object c = info.get("classes");
        this.classes = c == null ? null : ((List<Object>) c).stream().map(x -> (String) x).toList();
    }

    @Override
    public long size() {
        return size;
    }

    /** The fields' names, in record order. */
    public List<String> fields() {
        return fields;
    }

    /** The fields' dtypes ("f32", "u8", ...). */
    public List<String> dtypes() {
        return dtypes;
    }

    /** One record's shape per field. */
    public List<long[]> shapes() {
        return shapes.stream().map(long[]::clone).toList();
    }

    /** An image folder's class names (a label indexes them); null for other datasets. */
    public List<String> classes() {
        return classes;
    }

    /** Record index on the default device: one new tensor per field, the caller's to close. */
    @Override
    public List<Tensor> get(long index) {
        return get(index, null);
    }

    /** Record index (negative counts from the end) on device (null: the default). */
    public List<Tensor> get(long index, String device) {
        long h = handle();
        long i = index < 0 ? index + size : index;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dev = cString(arena, device);
            return List.of(Op.outputs(arena, Math.max(fields.size(), 1),
                    (out, cap, nOut) -> (int) Native.invoke(Abi.DATASET_GET, h, i, dev, out, cap, nOut)));
        }
    }

    long liveHandle() {
        return handle();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("NativeDataset(size=").append(size).append(", fields=(");
        for (int k = 0; k < fields.size(); k++) {
            b.append(k == 0 ? "" : ", ").append(fields.get(k)).append(": ").append(dtypes.get(k))
                    .append(Arrays.toString(shapes.get(k)));
        }
        return b.append("))").toString();
    }
}
