package io.tidemark.destinations.webhook;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntConsumer;
import java.util.zip.GZIPInputStream;

/**
 * A real HTTP server on loopback (the JDK's {@link HttpServer}) for the webhook tests: {@code /hook} records every
 * request and answers from a script (a status, a slow answer, a dropped connection), {@code /token} is an OAuth2
 * token endpoint for the client-credentials grant. Every handler runs on its own thread, so a slow answer does
 * not hold up the next request.
 */
final class WebhookReceiver implements AutoCloseable {

    static final String CLIENT_ID = "tidemark-client";
    static final String CLIENT_SECRET = "client-secret-Zq81xW";

    /** One request as it arrived; {@code body} is {@code raw} after undoing a gzip Content-Encoding. */
    record Received(Map<String, String> headers, byte[] raw, byte[] body, int status, int remotePort) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** How the server answers one request. */
    interface Reply {
        /** Answers; calls {@code recorder} with the status before the answer leaves, so the test sees it in time. */
        void answer(HttpExchange exchange, IntConsumer recorder) throws IOException;
    }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<Received> received = new ArrayList<>();
    private final Deque<Reply> script = new ArrayDeque<>();
    private final List<Map<String, String>> tokenRequests = new ArrayList<>();
    private final Deque<Reply> tokenScript = new ArrayDeque<>();
    private final Set<String> validTokens = new HashSet<>();
    private boolean requireToken;
    private boolean acceptNoToken;
    private long expiresIn = 3600;
    private int issued;

    WebhookReceiver() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/hook", this::hook);
        server.createContext("/token", this::token);
        server.setExecutor(threads);
        server.start();
    }

    URI url() {
        return uri("/hook");
    }

    URI tokenUrl() {
        return uri("/token");
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    // -- scripting ------------------------------------------------------------------------------------------------

    /** The next requests to /hook get these replies, in order; after them every request gets 200. */
    synchronized WebhookReceiver then(Reply... replies) {
        script.addAll(List.of(replies));
        return this;
    }

    static Reply status(int status, String... headerPairs) {
        return (exchange, recorder) -> {
            for (int i = 0; i < headerPairs.length; i += 2) {
                exchange.getResponseHeaders().add(headerPairs[i], headerPairs[i + 1]);
            }
            recorder.accept(status);
            respond(exchange, status, "");
        };
    }

    static Reply statusWithBody(int status, String body) {
        return (exchange, recorder) -> {
            recorder.accept(status);
            respond(exchange, status, body);
        };
    }

    /** A 400 whose body repeats every request header, as a careless receiver's error page might. */
    static Reply echoHeaders() {
        return (exchange, recorder) -> {
            StringBuilder body = new StringBuilder("bad request; you sent:");
            exchange.getRequestHeaders().forEach((k, v) -> body.append(' ').append(k).append('=').append(v));
            recorder.accept(400);
            respond(exchange, 400, body.toString());
        };
    }

    /** Answers 200, but only after {@code delay}: longer than the client waits. */
    static Reply slow(Duration delay) {
        return (exchange, recorder) -> {
            recorder.accept(-2);
            try {
                Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            respond(exchange, 200, "");
        };
    }

    /** Drops the connection without answering: the handler fails, and the server closes the socket. */
    static Reply reset() {
        return (exchange, recorder) -> {
            recorder.accept(-1);
            throw new IOException("test: connection dropped on purpose");
        };
    }

    /** Closes the exchange without sending a status line: the server closes the connection under the client. */
    static Reply closeWithoutAnswer() {
        return (exchange, recorder) -> {
            recorder.accept(-1);
            exchange.close();
        };
    }

    /** Requests to /hook need a bearer token this server issued and has not revoked. */
    synchronized WebhookReceiver requireToken() {
        requireToken = true;
        return this;
    }

    /** Every token issued so far is refused from now on (a key rotation on the receiver's side). */
    synchronized void revokeTokens() {
        validTokens.clear();
    }

    /** Every token, even a fresh one, is refused from now on. */
    synchronized void refuseAllTokens() {
        acceptNoToken = true;
        validTokens.clear();
    }

    synchronized WebhookReceiver tokenLifetime(long seconds) {
        this.expiresIn = seconds;
        return this;
    }

    synchronized WebhookReceiver thenToken(Reply... replies) {
        tokenScript.addAll(List.of(replies));
        return this;
    }

    // -- what arrived ---------------------------------------------------------------------------------------------

    synchronized List<Received> received() {
        return List.copyOf(received);
    }

    /** The requests /hook answered with 2xx. */
    synchronized List<Received> accepted() {
        return received.stream().filter(r -> r.status() >= 200 && r.status() < 300).toList();
    }

    synchronized List<Map<String, String>> tokenRequests() {
        return List.copyOf(tokenRequests);
    }

    synchronized int tokensIssued() {
        return issued;
    }

    // -- handlers -------------------------------------------------------------------------------------------------

    private void hook(HttpExchange exchange) throws IOException {
        byte[] raw;
        try (InputStream in = exchange.getRequestBody()) {
            raw = in.readAllBytes();
        }
        Map<String, String> headers = headers(exchange);
        byte[] body = "gzip".equals(headers.get("content-encoding")) ? gunzip(raw) : raw;
        Reply reply;
        boolean authorized;
        synchronized (this) {
            String authorization = headers.getOrDefault("authorization", "");
            authorized = !requireToken || authorization.startsWith("Bearer ")
                    && validTokens.contains(authorization.substring("Bearer ".length()));
            reply = authorized ? script.poll() : null;
        }
        Reply answer = !authorized ? status(401) : reply == null ? status(200) : reply;
        int port = exchange.getRemoteAddress().getPort();
        answer.answer(exchange, status -> record(new Received(headers, raw, body, status, port)));
    }

    private synchronized void record(Received r) {
        received.add(r);
    }

    private void token(HttpExchange exchange) throws IOException {
        String form;
        try (InputStream in = exchange.getRequestBody()) {
            form = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Map<String, String> request = new LinkedHashMap<>(parseForm(form));
        String authorization = exchange.getRequestHeaders().getFirst("Authorization");
        if (authorization != null) {
            request.put("Authorization", authorization);
        }
        Reply scripted;
        synchronized (this) {
            tokenRequests.add(request);
            scripted = tokenScript.poll();
        }
        if (scripted != null) {
            scripted.answer(exchange, status -> { });
            return;
        }
        if (!"client_credentials".equals(request.get("grant_type"))) {
            respond(exchange, 400, "{\"error\":\"unsupported_grant_type\"}");
            return;
        }
        String id = request.get("client_id");
        String secret = request.get("client_secret");
        if (authorization != null && authorization.startsWith("Basic ")) {
            String pair = new String(Base64.getDecoder().decode(authorization.substring(6)), StandardCharsets.UTF_8);
            int colon = pair.indexOf(':');
            id = URLDecoder.decode(pair.substring(0, colon), StandardCharsets.UTF_8);
            secret = URLDecoder.decode(pair.substring(colon + 1), StandardCharsets.UTF_8);
        }
        if (!CLIENT_ID.equals(id) || !CLIENT_SECRET.equals(secret)) {
            respond(exchange, 401, "{\"error\":\"invalid_client\",\"error_description\":\"client " + id
                    + " with secret " + secret + " is unknown\"}");
            return;
        }
        String token;
        long lifetime;
        synchronized (this) {
            token = "access-token-" + (++issued) + "-Kp3v";
            if (!acceptNoToken) {
                validTokens.add(token);
            }
            lifetime = expiresIn;
        }
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        respond(exchange, 200, "{\"access_token\":\"" + token + "\",\"token_type\":\"Bearer\",\"expires_in\":"
                + lifetime + "}");
    }

    private static Map<String, String> parseForm(String form) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String pair : form.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                values.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return values;
    }

    private static Map<String, String> headers(HttpExchange exchange) {
        Map<String, String> headers = new LinkedHashMap<>();
        exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), String.join(",", v)));
        return headers;
    }

    static void respond(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static byte[] gunzip(byte[] raw) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(raw))) {
            return in.readAllBytes();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
