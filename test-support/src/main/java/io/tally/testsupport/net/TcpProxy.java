package io.tally.testsupport.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder on 127.0.0.1 in front of a service, to take the service off the network without stopping it
 * (its state survives): {@link #down()} closes the listening socket and every open connection, so clients get
 * "connection refused" or a reset, as from a crashed host; {@link #up()} listens on the same port again.
 */
public final class TcpProxy implements AutoCloseable {
    private final InetSocketAddress target;
    private final int port;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private ServerSocket listener;

    /** Forwards a free local port to {@code host:targetPort}, listening at once. */
    public TcpProxy(String host, int targetPort) {
        this.target = new InetSocketAddress(host, targetPort);
        try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            this.port = probe.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        up();
    }

    public int port() {
        return port;
    }

    /** Starts forwarding again (no-op when it does). */
    public synchronized void up() {
        if (listener != null) return;
        try {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
            listener = s;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1:" + port + " again", e);
        }
        ServerSocket s = listener;
        Thread accept = new Thread(() -> acceptLoop(s), "tcp-proxy-" + port);
        accept.setDaemon(true);
        accept.start();
    }

    /** Refuses new connections and cuts the open ones. */
    public synchronized void down() {
        if (listener == null) return;
        closeQuietly(listener);
        listener = null;
        open.forEach(TcpProxy::closeQuietly);
        open.clear();
    }

    private void acceptLoop(ServerSocket s) {
        while (!s.isClosed()) {
            try {
                Socket client = s.accept();
                Socket upstream = new Socket();
                try {
                    upstream.connect(target, 5000);
                } catch (IOException e) {
                    closeQuietly(client);
                    closeQuietly(upstream);
                    continue;
                }
                open.add(client);
                open.add(upstream);
                if (s.isClosed()) { // down() ran while this one was being connected
                    closeQuietly(client);
                    closeQuietly(upstream);
                    return;
                }
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                return; // closed by down() or close()
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed: close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump-" + port);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        down();
    }
}
