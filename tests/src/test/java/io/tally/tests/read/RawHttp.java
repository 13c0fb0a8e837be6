package io.tally.tests.read;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * HTTP/1.1 over a plain socket, one request per connection ({@code Connection: close}), bytes exactly as
 * given: methods, request targets and headers that a regular client would refuse to send (bad percent
 * encoding, raw non-ASCII bytes, unknown methods) reach the server as they are.
 */
final class RawHttp {
    /** A request: method, request target (path and query, sent unencoded), headers and an optional body. */
    record Request(String method, byte[] target, Map<String, String> headers, byte[] body) {
        String describe() {
            String t = new String(target, StandardCharsets.ISO_8859_1);
            return method + " " + (t.length() > 200 ? t.substring(0, 200) + "..." : t) + " " + headers.keySet();
        }
    }

    /** An answer; {@code headers} keyed in lower case. */
    record Response(int status, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final int port;
    private final Duration timeout;

    RawHttp(int port, Duration timeout) {
        this.port = port;
        this.timeout = timeout;
    }

    /** Sends {@code r} and reads the answer to the end; a server that does not answer within the timeout throws. */
    Response send(Request r) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), (int) timeout.toMillis());
            s.setSoTimeout((int) timeout.toMillis());
            ByteArrayOutputStream req = new ByteArrayOutputStream();
            req.write((r.method() + " ").getBytes(StandardCharsets.ISO_8859_1));
            req.write(r.target());
            req.write(" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n".getBytes(StandardCharsets.ISO_8859_1));
            for (Map.Entry<String, String> h : r.headers().entrySet()) {
                req.write((h.getKey() + ": " + h.getValue() + "\r\n").getBytes(StandardCharsets.UTF_8));
            }
            if (r.body() != null) req.write(("Content-Length: " + r.body().length + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            req.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            if (r.body() != null) req.write(r.body());
            OutputStream out = s.getOutputStream();
            out.write(req.toByteArray());
            out.flush();
            return parse(readAll(s.getInputStream()), r.method().equals("HEAD"));
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            for (int n; (n = in.read(buf)) >= 0; ) all.write(buf, 0, n);
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException("no complete answer (connection still open) after " + all.size() + " bytes");
        } catch (IOException e) {
            if (all.size() == 0) throw e; // a reset after a complete answer is fine, before any is not
        }
        return all.toByteArray();
    }

    private static Response parse(byte[] raw, boolean head) throws IOException {
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (end < 0) throw new IOException("no complete status line and headers in " + raw.length + " bytes: " + shorten(text));
        String[] lines = text.substring(0, end).split("\r\n");
        String[] status = lines[0].split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/1.")) throw new IOException("not an HTTP answer: " + shorten(lines[0]));
        Map<String, String> headers = new TreeMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
        }
        byte[] rest = java.util.Arrays.copyOfRange(raw, end + 4, raw.length);
        byte[] body = head ? new byte[0] : "chunked".equalsIgnoreCase(headers.get("transfer-encoding")) ? dechunk(rest) : rest;
        String length = headers.get("content-length");
        if (!head && length != null && Integer.parseInt(length) != body.length) {
            throw new IOException("answer cut short: content-length " + length + ", got " + body.length + " bytes");
        }
        return new Response(Integer.parseInt(status[1]), headers, body);
    }

    private static byte[] dechunk(byte[] in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int i = 0;
        while (true) {
            int eol = indexOf(in, i);
            if (eol < 0) throw new IOException("chunked answer cut short");
            String size = new String(in, i, eol - i, StandardCharsets.ISO_8859_1).split(";")[0].trim();
            int n = Integer.parseInt(size, 16);
            if (n == 0) return out.toByteArray();
            if (eol + 2 + n > in.length) throw new IOException("chunked answer cut short");
            out.write(in, eol + 2, n);
            i = eol + 2 + n + 2;
        }
    }

    private static int indexOf(byte[] in, int from) {
        for (int i = from; i + 1 < in.length; i++) if (in[i] == '\r' && in[i + 1] == '\n') return i;
        return -1;
    }

    private static String shorten(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
