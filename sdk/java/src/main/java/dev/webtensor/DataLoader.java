package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * PyTorch's DataLoader: batches of batchSize records (the last one short
 * unless dropLast), in order or, with shuffle, in
 * {@link Data#permutation}(size, seed, epoch) order, epoch counting the
 * passes (or set by {@link #setEpoch}). Each {@code for (B batch : loader)}
 * reads one epoch; one pass at a time.
 *
 * <p>A {@link NativeDataset} is loaded by the library (wt_loader_*): its
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

        String json() {
            StringJoiner j = new StringJoiner(",", "{", "}");
            j.add("\"batch_size\":" + batchSize).add("\"shuffle\":" + shuffle).add("\"seed\":" + Long.toUnsignedString(seed))
                    .add("\"drop_last\":" + dropLast).add("\"workers\":" + numWorkers).add("\"prefetch\":" + prefetchFactor);
            if (device != null) {
                j.add("\"device\":" + Json.quote(device));
            }
            return j.toString();
        }
    }

    /** The library's loader handle, freed by close() or the Cleaner. */
    private static final class Handle implements Runnable {
        final AtomicLong h;

        Handle(long h) {
            this.h = new AtomicLong(h);
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.invoke(Abi.LOADER_FREE, x);
            }
        }
    }

    private final Dataset<?> dataset;
    private final Options o;
    private final Function<List<Object>, B> collate;
    private final Handle state;
    private final Cleaner.Cleanable cleanable;
    private long epoch;
    private ExecutorService pool;

    @SuppressWarnings("unchecked")
    private DataLoader(Dataset<?> dataset, Options o, Function<? extends List<?>, ? extends B> collate) {
        this.dataset = dataset;
        this.o = o;
        this.collate = (Function<List<Object>, B>) collate;
        long h = 0;
        if (collate == null) {
            NativeDataset ds = (NativeDataset) dataset;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(JAVA_LONG);
                Native.call(Abi.LOADER_NEW, ds.liveHandle(), arena.allocateFrom(o.json()), out);
                h = out.get(JAVA_LONG, 0);
            }
        }
        this.state = new Handle(h);
        this.cleanable = Tensor.CLEANER.register(this, state);
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
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalArgumentException("auto: Auto.tune takes a DataLoader over a NativeDataset (one of Data's "
                    + "readers); this one reads a Java dataset on Java threads, which the library does not run");
        }
        return h;
    }

    /** Batches per epoch. */
    public long size() {
        long h = state.h.get();
        if (h != 0) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(JAVA_LONG);
                Native.call(Abi.LOADER_LEN, h, out);
                return out.get(JAVA_LONG, 0);
            }
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
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException("DataLoader used after close()");
        }
        Native.call(Abi.LOADER_EPOCH, h, e);
        int fields = Math.max(((NativeDataset) dataset).fields().size(), 1);
        return new Batches<>(() -> {
            try (Arena arena = Arena.ofConfined()) {
                Tensor[] b = Op.outputs(arena, fields, (out, cap, nOut) -> (int) Native.invoke(Abi.LOADER_NEXT, h, out, cap, nOut));
                return b.length == 0 ? null : (B) List.of(b);
            }
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
        cleanable.clean();
        synchronized (this) {
            if (pool != null) {
                pool.shutdownNow();
                pool = null;
            }
        }
    }
}
