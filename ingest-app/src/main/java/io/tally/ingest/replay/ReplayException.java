package io.tally.ingest.replay;

/** The replay cannot run or did not finish; the message says why and what to do, the exit code says how it ended. */
public class ReplayException extends RuntimeException {
    private final int exitCode;

    public ReplayException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public ReplayException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
