package io.tidemark.destinations.webhook;

import io.tidemark.destinations.webhook.internal.Authorizer;
import io.tidemark.destinations.webhook.internal.Endpoints;
import io.tidemark.destinations.webhook.internal.EnvelopeParts;
import io.tidemark.destinations.webhook.internal.Gzip;
import io.tidemark.destinations.webhook.internal.HeaderRules;
import io.tidemark.destinations.webhook.internal.RequestPart;
import io.tidemark.destinations.webhook.internal.RetryAfter;
import io.tidemark.destinations.webhook.internal.Secrets;
import io.tidemark.destinations.webhook.internal.Statuses;
import io.tidemark.destinations.webhook.internal.WebhookSigner;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.sync.spi.Destination;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A destination that POSTs each page to an HTTP endpoint as the page's envelope in JSON (docs/contract.md, "The
 * envelope"), with the Standard Webhooks 1.0 headers: {@code webhook-id} (the page's idempotency key),
 * {@code webhook-timestamp} and, when a signing secret is configured, {@code webhook-signature}.
 *
 * <pre>{@code
 * Destination hook = WebhookDestination.builder()
 *         .url("https://hooks.example.com/tidemark")
 *         .auth(WebhookAuth.bearer(token))
 *         .signingSecret("whsec_...")
 *         .gzip(true)
 *         .maxRequestBytes(1_000_000)
 *         .build();
 * }</pre>
 *
 * <p>A page too large for {@link Builder#maxRequestBytes} goes as several requests, in order, each under its own
 * stable id ({@code <idempotencyKey>-p<part>}). Responses: 2xx accepted; 408, 425, 429, 5xx, timeouts and
 * connection failures are retryable {@link DeliveryException}s (with the receiver's {@code Retry-After}); any
 * other status is fatal. When a later part of a page fails, the parts already accepted are not sent again in the
 * same call; when the engine offers the page again, every part goes again under the same ids, so the receiver
 * drops the ones it has by {@code webhook-id}.
 *
 * <p>Thread-safe: one instance may serve several objects. Secrets never appear in {@link #toString()}, messages or
 * logs. See destinations/README-webhook.md.
 */
public final class WebhookDestination implements Destination {

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** The Standard Webhooks recommendation is 15 to 30 s for a receiver to answer. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    /** The smallest {@link Builder#maxRequestBytes} accepted: the envelope's own fields need room. */
    public static final long MIN_REQUEST_BYTES = 1024;

    private static final Logger LOG = LoggerFactory.getLogger(WebhookDestination.class);

    private final URI url;
    private final String endpoint;
    private final Map<String, String> headers;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final WebhookAuth auth;
    private final boolean gzip;
    private final WebhookSigner signer;
    private final long maxRequestBytes;
    private final Clock clock;
    private final HttpClient client;
    private final Authorizer authorizer;
    private final Secrets secrets;

    private WebhookDestination(Builder b, URI url) {
        this.url = url;
        this.endpoint = Endpoints.describe(url);
        this.headers = Map.copyOf(b.headers);
        this.connectTimeout = b.connectTimeout;
        this.requestTimeout = b.requestTimeout;
        this.auth = b.auth;
        this.gzip = b.gzip;
        this.signer = b.signingSecrets.isEmpty() ? null : WebhookSigner.of(b.signingSecrets);
        this.maxRequestBytes = b.maxRequestBytes;
        this.clock = b.clock;
        HttpClient.Builder client = HttpClient.newBuilder()
                .version(b.httpVersion)
                .connectTimeout(connectTimeout)
                // Standard Webhooks: a redirect is a failure (update the URL), not something to follow.
                .followRedirects(HttpClient.Redirect.NEVER);
        if (b.sslContext != null) {
            client.sslContext(b.sslContext);
        }
        this.client = client.build();
        this.authorizer = auth.authorizer(this.client, requestTimeout, clock);
        List<String> fixed = new ArrayList<>(b.signingSecrets);
        fixed.addAll(headers.values());
        this.secrets = new Secrets(() -> {
            List<String> all = new ArrayList<>(fixed);
            all.addAll(authorizer.secrets());
            return all;
        });
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Sends the page, as one request or as several parts in order; returns when every part was accepted.
     *
     * @throws DeliveryException retryable or fatal, as the class comment says; the message names the page and part
     */
    @Override
    public void deliver(ChangeBatch batch) throws InterruptedException {
        // The whole plan first: a change that cannot fit fails the page before any part of it is sent.
        List<RequestPart> parts = EnvelopeParts.plan(batch, maxRequestBytes);
        for (RequestPart part : parts) {
            send(part);
        }
    }

    private void send(RequestPart part) throws InterruptedException {
        byte[] json = EnvelopeParts.body(part);
        byte[] wire = gzip ? Gzip.compress(json) : json;
        HttpResponse<String> response = exchange(part, json, wire);
        if (response.statusCode() == 401 && authorizer.renewAfterRejection(response.request())) {
            response = exchange(part, json, wire);
            if (response.statusCode() == 401) {
                throw DeliveryException.fatal(failure(part, response) + "; a freshly issued token was refused"
                        + " as well", null);
            }
        }
        int status = response.statusCode();
        if (Statuses.accepted(status)) {
            LOG.debug("{} accepted {} ({} changes, {} bytes) with HTTP {}", endpoint, part.describe(),
                    part.changeCount(), wire.length, status);
            return;
        }
        if (Statuses.retryable(status)) {
            Optional<Duration> after = RetryAfter.parse(response.headers().firstValue("Retry-After").orElse(null),
                    clock.instant());
            String message = failure(part, response) + after.map(d -> "; retry after " + d.getSeconds() + " s")
                    .orElse("");
            throw after.isPresent() ? DeliveryException.retryableAfter(message, after.get())
                    : DeliveryException.retryable(message, null);
        }
        throw DeliveryException.fatal(failure(part, response) + (status >= 300 && status < 400
                ? "; redirects are not followed, configure the final URL" : ""), null);
    }

    /** One attempt: a fresh timestamp, its signature, the credentials; connection failures become retryable. */
    private HttpResponse<String> exchange(RequestPart part, byte[] json, byte[] wire) throws InterruptedException {
        long timestamp = clock.instant().getEpochSecond();
        HttpRequest.Builder request = HttpRequest.newBuilder(url)
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .header("webhook-id", part.id())
                .header("webhook-timestamp", Long.toString(timestamp));
        if (signer != null) {
            // Signed over the JSON payload, before gzip: what the receiver holds once its stack undid the encoding.
            request.header("webhook-signature", signer.signature(part.id(), timestamp, json));
        }
        if (gzip) {
            request.header("Content-Encoding", "gzip");
        }
        headers.forEach(request::header);
        authorizer.authorize(request);
        HttpRequest built = request.POST(HttpRequest.BodyPublishers.ofByteArray(wire)).build();
        try {
            return client.send(built, info -> Statuses.accepted(info.statusCode())
                    ? HttpResponse.BodySubscribers.replacing("")
                    : HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8));
        } catch (HttpConnectTimeoutException e) {
            throw DeliveryException.retryable("could not connect to " + endpoint + " within connectTimeout "
                    + connectTimeout + " to send " + part.describe(), e);
        } catch (HttpTimeoutException e) {
            throw DeliveryException.retryable(endpoint + " did not answer " + part.describe()
                    + " within requestTimeout " + requestTimeout, e);
        } catch (IOException e) {
            throw DeliveryException.retryable("sending " + part.describe() + " to " + endpoint + " failed: " + e, e);
        }
    }

    private String failure(RequestPart part, HttpResponse<String> response) {
        String body = secrets.snippet(response.body());
        return endpoint + " answered HTTP " + response.statusCode() + " to " + part.describe()
                + (body.isEmpty() ? "" : " (response: " + body + ")");
    }

    @Override
    public String toString() {
        List<String> names = new ArrayList<>(headers.keySet());
        names.sort(String.CASE_INSENSITIVE_ORDER);
        return "WebhookDestination[POST " + endpoint + ", auth " + auth
                + (names.isEmpty() ? "" : ", headers " + names + " (values hidden)")
                + (signer == null ? ", unsigned" : ", signed: " + signer)
                + (gzip ? ", gzip" : "")
                + (maxRequestBytes > 0 ? ", at most " + maxRequestBytes + " bytes per request" : "")
                + ", connectTimeout " + connectTimeout + ", requestTimeout " + requestTimeout + "]";
    }

    /** Collects the configuration; {@link #build()} checks all of it at once. */
    public static final class Builder {

        private Object url;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private WebhookAuth auth = WebhookAuth.none();
        private boolean gzip;
        private List<String> signingSecrets = List.of();
        private long maxRequestBytes;
        private Clock clock = Clock.systemUTC();
        private SSLContext sslContext;
        private HttpClient.Version httpVersion = HttpClient.Version.HTTP_1_1;

        private Builder() {
        }

        /** Where to POST; http or https. Required. */
        public Builder url(URI url) {
            this.url = url;
            return this;
        }

        /** Where to POST, parsed by {@link #build()}. */
        public Builder url(String url) {
            this.url = url;
            return this;
        }

        /** A header sent with every request (a tenant, a routing key); a later call for the same name replaces it. */
        public Builder header(String name, String value) {
            headers.put(name, value);
            return this;
        }

        /** How long to wait for a connection (default 10 s). */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        /** How long to wait for the response to one request, once sent (default 30 s). */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = timeout;
            return this;
        }

        /** How to authenticate (default {@link WebhookAuth#none()}). */
        public Builder auth(WebhookAuth auth) {
            this.auth = auth;
            return this;
        }

        /** Compress each request body with gzip and say so in {@code Content-Encoding} (default off). */
        public Builder gzip(boolean gzip) {
            this.gzip = gzip;
            return this;
        }

        /** Sign each request with this Standard Webhooks secret ({@code whsec_<base64 key>}, 24 to 64 bytes). */
        public Builder signingSecret(String secret) {
            this.signingSecrets = Arrays.asList(secret);
            return this;
        }

        /**
         * Sign with each of these secrets, the signatures separated by spaces: during a rotation the new secret and
         * the old one, so receivers verify with either.
         */
        public Builder signingSecrets(List<String> secrets) {
            this.signingSecrets = secrets;
            return this;
        }

        /**
         * The most bytes of JSON one request may carry; a larger page is split before the limit would be passed.
         * 0, the default, sends each page as one request. At least {@value #MIN_REQUEST_BYTES} otherwise. The limit
         * is on the JSON before gzip, so it bounds the compressed body too.
         */
        public Builder maxRequestBytes(long bytes) {
            this.maxRequestBytes = bytes;
            return this;
        }

        /** The clock for {@code webhook-timestamp}, token expiry and {@code Retry-After} dates (default UTC). */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /** TLS settings for https endpoints (default: the JVM's). */
        public Builder sslContext(SSLContext sslContext) {
            this.sslContext = sslContext;
            return this;
        }

        /** The HTTP version to ask for (default HTTP/1.1, with persistent connections). */
        public Builder httpVersion(HttpClient.Version version) {
            this.httpVersion = version;
            return this;
        }

        public WebhookDestination build() {
            Checks checks = Checks.of("WebhookDestination");
            URI uri = parseUrl(checks);
            if (uri != null) {
                String problem = Endpoints.problem(uri);
                checks.that(problem == null, "url " + problem);
            }
            checks.noNulls("headers", headers.keySet());
            headers.forEach((name, value) -> {
                if (name == null) {
                    return;
                }
                checks.that(HeaderRules.isToken(name), "header name '" + name + "' is not a valid HTTP header name");
                checks.that(!HeaderRules.isToken(name) || !HeaderRules.isReserved(name),
                        "header '" + name + "' is set by the webhook itself and cannot be configured");
                checks.that(HeaderRules.isValue(value), "header '" + name
                        + "' must have a value without line breaks");
            });
            checks.positive("connectTimeout", connectTimeout);
            checks.positive("requestTimeout", requestTimeout);
            if (checks.notNull("auth", auth)) {
                auth.check(checks);
                String authHeader = auth.headerName();
                checks.that(authHeader == null || headers.keySet().stream()
                                .noneMatch(name -> authHeader.equalsIgnoreCase(name)),
                        "header '" + authHeader + "' is set by auth " + auth + "; do not configure it as a header too");
            }
            if (checks.noNulls("signingSecrets", signingSecrets)) {
                for (int i = 0; i < signingSecrets.size(); i++) {
                    String problem = WebhookSigner.problem(signingSecrets.get(i));
                    checks.that(problem == null, "signing secret " + (i + 1) + " " + problem);
                }
            }
            checks.that(maxRequestBytes == 0 || maxRequestBytes >= MIN_REQUEST_BYTES, "maxRequestBytes must be 0"
                    + " (no splitting) or at least " + MIN_REQUEST_BYTES + ", got " + maxRequestBytes);
            checks.notNull("clock", clock);
            checks.notNull("httpVersion", httpVersion);
            checks.throwIfAny();
            return new WebhookDestination(this, uri);
        }

        private URI parseUrl(Checks checks) {
            if (url instanceof URI) {
                return (URI) url;
            }
            if (url == null) {
                checks.add("url is required: the endpoint to POST pages to");
                return null;
            }
            try {
                return new URI((String) url);
            } catch (URISyntaxException e) {
                // The reason only: the text may carry a secret in its query.
                checks.add("url is not a valid URI: " + e.getReason());
                return null;
            }
        }
    }
}
