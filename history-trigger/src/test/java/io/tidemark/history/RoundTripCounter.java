package io.tidemark.history;

import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A TCP relay on the loopback between the JDBC driver and the embedded server that counts round trips by reading the
 * frontend protocol the driver sends. Only ever connects to the local test server.
 *
 * <p>A round trip is a point where the driver stops and waits for the server: the end of an extended-protocol batch
 * ({@code Sync}) or a simple query ({@code Query}). One exception: the driver sends a transaction's {@code BEGIN} as a
 * simple query and goes straight on with the statement that follows, without waiting, so a bare {@code BEGIN} is not
 * counted. Counting messages rather than watching which side spoke last keeps the count independent of thread
 * scheduling (the relay may read a pipelined {@code BEGIN} and its statement apart, with the server's answer to the
 * first in between).
 */
public final class RoundTripCounter implements AutoCloseable {

    private static final int SSL_REQUEST = 80877103;
    private static final int GSSENC_REQUEST = 80877104;

    private final ServerSocket listener;
    private final int serverPort;
    private int roundTrips;

    public RoundTripCounter(int serverPort) throws IOException {
        this.serverPort = serverPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "round-trip-counter");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Connections through the relay, as the superuser, to {@code database}. */
    public DataSource dataSource(String database) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] {"127.0.0.1"});
        ds.setPortNumbers(new int[] {listener.getLocalPort()});
        ds.setDatabaseName(database);
        ds.setUser("postgres");
        return ds;
    }

    public synchronized int roundTrips() {
        return roundTrips;
    }

    public synchronized void reset() {
        roundTrips = 0;
    }

    private synchronized void waited() {
        roundTrips++;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                pump(client.getInputStream(), server.getOutputStream(), new FrontendReader());
                pump(server.getInputStream(), client.getOutputStream(), null);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(InputStream in, OutputStream out, FrontendReader reader) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[65536];
            try (in; out) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    // Count before forwarding: the answer cannot arrive before the question is counted.
                    if (reader != null) {
                        reader.accept(buffer, n);
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException ignored) {
                // one side closed the connection
            }
        }, "round-trip-pump");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Splits what the driver sends into protocol messages, across reads. Before the startup message, messages have a
     * length but no type byte (SSLRequest, GSSENCRequest, StartupMessage); after it, a type byte and a length.
     */
    private final class FrontendReader {
        private boolean started;
        private final byte[] header = new byte[5];
        private int headerFill;
        private byte[] body;
        private int bodyFill;

        void accept(byte[] data, int length) {
            int i = 0;
            while (i < length) {
                int headerSize = started ? 5 : 4;
                if (body == null) {
                    int take = Math.min(headerSize - headerFill, length - i);
                    System.arraycopy(data, i, header, headerFill, take);
                    headerFill += take;
                    i += take;
                    if (headerFill < headerSize) {
                        return;
                    }
                    int offset = started ? 1 : 0;
                    int messageLength = ((header[offset] & 0xFF) << 24) | ((header[offset + 1] & 0xFF) << 16)
                            | ((header[offset + 2] & 0xFF) << 8) | (header[offset + 3] & 0xFF);
                    body = new byte[messageLength - 4];
                    bodyFill = 0;
                }
                int take = Math.min(body.length - bodyFill, length - i);
                System.arraycopy(data, i, body, bodyFill, take);
                bodyFill += take;
                i += take;
                if (bodyFill == body.length) {
                    message();
                    body = null;
                    headerFill = 0;
                }
            }
        }

        private void message() {
            if (!started) {
                int code = body.length >= 4 ? ((body[0] & 0xFF) << 24) | ((body[1] & 0xFF) << 16)
                        | ((body[2] & 0xFF) << 8) | (body[3] & 0xFF) : 0;
                started = code != SSL_REQUEST && code != GSSENC_REQUEST;
                return;
            }
            char type = (char) header[0];
            if (type == 'S') {
                waited();
            } else if (type == 'Q') {
                String query = new String(body, 0, Math.max(0, body.length - 1), StandardCharsets.UTF_8).trim();
                if (!query.equalsIgnoreCase("BEGIN")) {
                    waited();
                }
            }
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
