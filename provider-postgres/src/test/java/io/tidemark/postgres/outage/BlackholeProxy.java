package io.tidemark.postgres.outage;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of a server, which can stop forwarding without closing anything (a blackhole, as a
 * network partition or a dead load balancer looks to a client) and later resume. While blackholed, bytes already
 * read are held, connections stay open, and new connections are accepted but not connected through: a client waits
 * as it would on a real partition, until its own timeouts end the wait.
 */
final class BlackholeProxy implements AutoCloseable {

    private final int upstreamPort;
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean blackholed;
    private volatile boolean closed;

    BlackholeProxy(int upstreamPort) {
        this.upstreamPort = upstreamPort;
        try {
            this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread accept = new Thread(this::accept, "blackhole-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Stops forwarding: nothing is closed, nothing gets through. */
    void blackhole() {
        blackholed = true;
    }

    /** Forwards again, what was held first. */
    void resume() {
        synchronized (gate) {
            blackholed = false;
            gate.notifyAll();
        }
    }

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (blackholed && !closed) {
                gate.wait();
            }
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                sockets.add(client);
                Thread t = new Thread(() -> connect(client), "blackhole-proxy-connect");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void connect(Socket client) {
        try {
            awaitOpen();
            Socket upstream = new Socket();
            upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort));
            sockets.add(upstream);
            pump(client, upstream);
            pump(upstream, client);
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    awaitOpen();
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // one side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "blackhole-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        resume();
        closeQuietly(listener);
        sockets.forEach(BlackholeProxy::closeQuietly);
    }

    private static void closeQuietly(ServerSocket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
