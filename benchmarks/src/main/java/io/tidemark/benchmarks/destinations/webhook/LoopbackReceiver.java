package io.tidemark.benchmarks.destinations.webhook;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The benchmark's receiver: the JDK's HTTP server on loopback that reads each request body to its end (as any
 * receiver must, to keep the connection) and answers 204 at once, counting requests and body bytes.
 */
final class LoopbackReceiver implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(2);
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    LoopbackReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.createContext("/hook", this::accept);
        server.setExecutor(threads);
        server.start();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hook");
    }

    private void accept(HttpExchange exchange) throws IOException {
        long read = 0;
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = exchange.getRequestBody()) {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                read += n;
            }
        }
        requests.incrementAndGet();
        bytes.addAndGet(read);
        exchange.sendResponseHeaders(204, -1);
        exchange.close();
    }

    long requests() {
        return requests.get();
    }

    long bytes() {
        return bytes.get();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
