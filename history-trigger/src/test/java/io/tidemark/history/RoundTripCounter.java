package io.tidemark.history;

import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A TCP relay on the loopback between the JDBC driver and the embedded server that counts round trips: a round trip
 * starts whenever the client sends after the server last spoke. Only ever connects to the local test server.
 */
public final class RoundTripCounter implements AutoCloseable {

    private final ServerSocket listener;
    private final int serverPort;
    private int roundTrips;
    private boolean clientSpokeLast;

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
        clientSpokeLast = false;
    }

    private synchronized void clientSent() {
        if (!clientSpokeLast) {
            roundTrips++;
            clientSpokeLast = true;
        }
    }

    private synchronized void serverSent() {
        clientSpokeLast = false;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                pump(client.getInputStream(), server.getOutputStream(), true);
                pump(server.getInputStream(), client.getOutputStream(), false);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(InputStream in, OutputStream out, boolean fromClient) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[65536];
            try (in; out) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    // Count before forwarding: the answer cannot arrive before the question is counted.
                    if (fromClient) {
                        clientSent();
                    } else {
                        serverSent();
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

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
