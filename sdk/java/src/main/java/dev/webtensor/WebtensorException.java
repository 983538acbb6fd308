package dev.webtensor;

/**
 * A call into libwebtensor failed. The message is the library's own
 * (wt_last_error), naming the problem and the values; {@link #status()} is the
 * WT_ERR_* code. Unchecked, since almost every call can fail on bad input and
 * callers rarely recover from one locally.
 */
public class WebtensorException extends RuntimeException {
    /** WT_ERR_INVALID: an argument is wrong (shape, dtype, attribute, op name). */
    public static final int INVALID = 1;
    /** WT_ERR_HANDLE: an unknown or already freed tensor handle. */
    public static final int HANDLE = 2;
    /** WT_ERR_UNSUPPORTED: a valid request the library cannot serve. */
    public static final int UNSUPPORTED = 3;
    /** WT_ERR_OUT_OF_MEMORY: an allocation failed. */
    public static final int OUT_OF_MEMORY = 4;
    /** WT_ERR_BUFFER_TOO_SMALL (handled inside the SDK). */
    public static final int BUFFER_TOO_SMALL = 5;
    /** WT_ERR_INTERNAL: a bug in webtensor, reported instead of crashing. */
    public static final int INTERNAL = 6;
    /** WT_ERR_IO: the file system refused (a missing folder, permissions, a full disk). */
    public static final int IO = 7;

    private final int status;
    private final String statusName;

    WebtensorException(int status, String statusName, String message) {
        super(message.isEmpty() ? statusName : message);
        this.status = status;
        this.statusName = statusName;
    }

    /** The WT_ERR_* status code. */
    public int status() {
        return status;
    }

    /** The status's short English name (wt_status_string). */
    public String statusName() {
        return statusName;
    }
}
