package dev.webtensor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A dataset the library reads (the wt_call kind dataset: .npy, .npz, safetensors,
 * Parquet, image folders, tensors), made by {@link Data}: a record is one
 * new tensor per field. Close it (loaders made from it keep it alive); a
 * Cleaner frees a dropped one.
 */
public final class NativeDataset extends NativeObject implements Dataset<List<Tensor>> {
    private final long size;
    private final List<String> fields, dtypes;
    private final List<long[]> shapes;
    private final List<String> classes;

    NativeDataset(long handle) {
        super(handle, "dataset", "dataset");
        Map<?, ?> info = map(call("dataset.info", handle));
        this.size = asLong(info.get("len"));
        List<String> f = new ArrayList<>(), d = new ArrayList<>();
        List<long[]> s = new ArrayList<>();
        for (Object o : (List<?>) info.get("fields")) {
            f.add((String) map(o).get("name"));
            d.add((String) map(o).get("dtype"));
            s.add(longs(map(o).get("shape")));
        }
        this.fields = List.copyOf(f);
        this.dtypes = List.copyOf(d);
        this.shapes = List.copyOf(s);
        Object c = info.get("classes");
        this.classes = c == null ? null : ((List<?>) c).stream().map(String.class::cast).toList();
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
        return tensors(call("dataset.get", handle(), args("index", index, "device", device), null));
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
