package io.tally.testsupport.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** Free local ports for processes a test starts. */
public final class Ports {
    private Ports() {}

    /** A port nothing listens on right now; another process may still take it before the caller binds it. */
    public static int free() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free local port", e);
        }
    }
}
