package dev.webtensor;

/**
 * A map-style dataset, PyTorch's torch.utils.data.Dataset: records by index.
 * Implement it in Java (a {@link DataLoader} reads it in the library's
 * shuffle order), or open one the library reads ({@link NativeDataset},
 * from {@link Data}).
 *
 * @param <T> a record
 */
public interface Dataset<T> {
    /** How many records (Python's len). */
    long size();

    /** Record index, 0 <= index < size(). */
    T get(long index);
}
