package dev.webtensor;

import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

import static dev.webtensor.NativeObject.args;
import static dev.webtensor.NativeObject.asLong;
import static dev.webtensor.NativeObject.call;

/**
 * PyTorch's DataLoader: batches of batchSize records (the last one short
 * unless dropLast), in order or, with shuffle, in
 * {@link Data#permutation}(size, seed, epoch) order, epoch counting the
 * passes (or set by {@link #setEpoch}). Each {@code for (B batch : loader)}
 * reads one epoch; one pass at a time.
 *
 * <p>A {@link NativeDataset} is loaded by the library (wt_call's loader targets): its
 * workers are goroutines, batches are one tensor per field on the device.
 * A Java {@link Dataset} is read here, by numWorkers threads (0: in the
 * loop), in the same order for the same seed, and batched by a collate
 * function ({@link Data#defaultCollate} by default). Batches are the
 * caller's to close.
 *
 * @param <B> a batch
 */
public final class DataLoader<B> implements Iterable<B>, AutoCloseable {
    /** The loader's settings, PyTorch's names; setters return this. */
    public static final class Options {
        long batchSize = 1, seed;
        boolean shuffle, dropLast;
        int numWorkers, prefetchFactor = 2;
        String device;

        public Options batchSize(long n) {
            if (n < 1) {
                throw new IllegalArgumentException("batchSize must be at least 1, got " + n);
            }
            batchSize = n;
            return this;
        }

        public Options shuffle(boolean on) {
            shuffle = on;
            return this;
        }

        public Options seed(long s) {
            seed = s;
            return this;
        }

        public Options dropLast(boolean on) {
            dropLast = on;
            return this;
        }

        /** Worker goroutines (a NativeDataset) or threads (a Java Dataset); 0 reads each batch when asked for. */
        public Options numWorkers(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("numWorkers must be >= 0, got " + n);
            }
            numWorkers = n;
            return this;
        }

        /** Batches each worker reads ahead. */
        public Options prefetchFactor(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("prefetchFactor must be >= 1, got " + n);
            }
            prefetchFactor = n;
            return this;
        }

        /** Where the batches go (null: the default device). */
        public Options device(String d) {
            device = d;
            return this;
        }

        /** loader.new's options (the seed as the runtime's uint64: a negative long is its two's complement). */
        Map<String, Object> map() {
            return args("batch_size", batchSize, "shuffle", shuffle, "seed", new BigInteger(Long.toUnsignedString(seed)),
                    "drop_last", dropLast, "workers", numWorkers, "prefetch", prefetchFactor, "device", device);
        }
    }

    /** The library's loader, freed by close() or the Cleaner through loader.free. */
    private static final class NativeLoader extends NativeObject {
        NativeLoader(NativeDataset ds, Options o) {
            super(asLong(call("loader.new", 0, args("dataset", ds, "options", o.map()), null)), "loader", "DataLoader");
        }
    }

    private final Dataset<?> dataset;
    private final Options o;
    private final Function<List<Object>, B> collate;
    private final NativeLoader loader; // null: a Java-side loader
    private long epoch;
    private ExecutorService pool;

    @SuppressWarnings("unchecked")
    private DataLoader(Dataset<?> dataset, Options o, Function<? extends List<?>, ? extends B> collate) {
        this.dataset = dataset;
        this.o = o;
        this.collate = (Function<List<Object>, B>) collate;
        this.loader = collate == null ? new NativeLoader((NativeDataset) dataset, o) : null;
    }

    /** The library's loader over ds: each batch is one tensor per field. */
    public static DataLoader<List<Tensor>> of(NativeDataset ds, Options o) {
        return new DataLoader<>(ds, o, null);
    }

    /** A loader over any dataset, batched by {@link Data#defaultCollate} (a NativeDataset: the library's loader). */
    public static <T> DataLoader<Object> of(Dataset<T> ds, Options o) {
        if (ds instanceof NativeDataset n) {
            return new DataLoader<>(n, o, null);
        }
        return new DataLoader<>(ds, o, Data::defaultCollate);
    }

    /** A loader whose batches are collate(records); a NativeDataset's records are read one by one. */
    public static <T, R> DataLoader<R> of(Dataset<T> ds, Options o, Function<List<T>, R> collate) {
        return new DataLoader<>(ds, o, collate);
    }

    /**
     * The library's loader handle, for the data agent (Auto.tune); a loader over a
     * Java dataset has none: its records are read on Java threads, which the
     * library does not run.
     */
    long nativeHandle() {
        if (loader == null) {
            throw new IllegalArgumentException("auto: Auto.tune takes a DataLoader over a NativeDataset (one of Data's "
                    + "readers); this one reads a Java dataset on Java threads, which the library does not run");
        }
        return loader.handle();
    }

    /** Batches per epoch. */
    public long size() {
        if (loader != null) {
            return asLong(call("loader.len", loader.handle()));
        }
        long n = dataset.size();
        return o.dropLast ? n / o.batchSize : (n + o.batchSize - 1) / o.batchSize;
    }

    /** The epoch the next pass reads (its shuffle order); passes count on from it. */
    public void setEpoch(long e) {
        if (e < 0) {
            throw new IllegalArgumentException("epoch must not be negative, got " + e);
        }
        epoch = e;
    }

    /** One epoch: the next pass's batches. */
    @Override
    public Iterator<B> iterator() {
        long e = epoch++;
        return collate == null ? nativeEpoch(e) : javaEpoch(e);
    }

    @SuppressWarnings("unchecked")
    private Iterator<B> nativeEpoch(long e) {
        call("loader.epoch", loader.handle(), args("epoch", e), null);
        return new Batches<>(() -> {
            List<Tensor> b = NativeObject.tensors(call("loader.next", loader.handle()));
            return b.isEmpty() ? null : (B) b;
        });
    }

    private Iterator<B> javaEpoch(long e) {
        long n = dataset.size();
        long[] order = o.shuffle ? Data.permutation(n, o.seed, e) : null;
        long end = o.dropLast ? n - n % o.batchSize : n;
        List<long[]> batches = new ArrayList<>();
        for (long i = 0; i < end; i += o.batchSize) {
            long[] idx = new long[(int) Math.min(o.batchSize, end - i)];
            for (int k = 0; k < idx.length; k++) {
                idx[k] = order == null ? i + k : order[(int) (i + k)];
            }
            batches.add(idx);
        }
        Iterator<long[]> todo = batches.iterator();
        if (o.numWorkers == 0) {
            return new Batches<>(() -> todo.hasNext() ? read(todo.next()) : null);
        }
        ExecutorService p = workers();
        ArrayDeque<Future<B>> pending = new ArrayDeque<>();
        int window = o.numWorkers * o.prefetchFactor;
        return new Batches<>(() -> {
            while (pending.size() < window && todo.hasNext()) {
                long[] idx = todo.next();
                pending.add(p.submit(() -> read(idx)));
            }
            Future<B> f = pending.poll();
            if (f == null) {
                return null;
            }
            try {
                return f.get();
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("DataLoader interrupted", ex);
            } catch (ExecutionException ex) {
                throw ex.getCause() instanceof RuntimeException r ? r : new IllegalStateException(ex.getCause());
            }
        });
    }

    private synchronized ExecutorService workers() {
        if (pool == null) {
            pool = Executors.newFixedThreadPool(o.numWorkers, r -> {
                Thread t = new Thread(r, "webtensor-data");
                t.setDaemon(true);
                return t;
            });
        }
        return pool;
    }

    /** One batch of a Java-side epoch: the records, collated; a NativeDataset's record tensors the batch does not hold are closed. */
    @SuppressWarnings("unchecked")
    private B read(long[] idx) {
        List<Object> records = new ArrayList<>(idx.length);
        for (long i : idx) {
            records.add(dataset instanceof NativeDataset n ? n.get(i, o.device) : dataset.get(i));
        }
        B batch = collate.apply(records);
        if (batch == null) {
            throw new IllegalStateException("DataLoader: the collate function returned null");
        }
        if (dataset instanceof NativeDataset) {
            Set<Object> kept = Collections.newSetFromMap(new IdentityHashMap<>());
            collect(batch, kept);
            for (Object r : records) {
                for (Tensor t : (List<Tensor>) r) {
                    if (!kept.contains(t)) {
                        t.close();
                    }
                }
            }
        }
        return batch;
    }

    private static void collect(Object x, Set<Object> into) {
        if (x instanceof Tensor) {
            into.add(x);
        } else if (x instanceof Iterable<?> it) {
            it.forEach(y -> collect(y, into));
        } else if (x instanceof Map<?, ?> m) {
            m.values().forEach(y -> collect(y, into));
        } else if (x instanceof Object[] a) {
            for (Object y : a) {
                collect(y, into);
            }
        }
    }

    /** An iterator over a source that returns null at its end. */
    private static final class Batches<B> implements Iterator<B> {
        interface Source<B> {
            B next();
        }

        private final Source<B> src;
        private B ahead;
        private boolean done;

        Batches(Source<B> src) {
            this.src = src;
        }

        @Override
        public boolean hasNext() {
            if (ahead == null && !done) {
                ahead = src.next();
                done = ahead == null;
            }
            return ahead != null;
        }

        @Override
        public B next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            B b = ahead;
            ahead = null;
            return b;
        }
    }

    /** Stops the library's workers and this loader's threads; batches already read stay valid. Closing twice is harmless. */
    @Override
    public void close() {
        if (loader != null) {
            loader.close();
        }
        synchronized (this) {
            if (pool != null) {
                pool.shutdownNow();
                pool = null;
            }
        }
    }
}
