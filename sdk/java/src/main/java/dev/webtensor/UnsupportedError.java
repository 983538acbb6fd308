package dev.webtensor;

/**
 * A valid request the library cannot serve here (WT_ERR_UNSUPPORTED): a
 * device that does not open (the message says why: no driver, no adapter),
 * a dtype or layout it lacks. Python's {@code wt.UnsupportedError}, under
 * the same name in every SDK; a {@link WebtensorException} with status
 * {@link WebtensorException#UNSUPPORTED}.
 */
public class UnsupportedError extends WebtensorException {
    UnsupportedError(String statusName, String message) {
        super(UNSUPPORTED, statusName, message);
    }
}
