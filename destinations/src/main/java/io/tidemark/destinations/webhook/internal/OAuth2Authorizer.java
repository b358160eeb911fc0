package io.tidemark.destinations.webhook.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.sync.internal.Json;
import io.tidemark.sync.spi.DeliveryException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * Bearer tokens from an OAuth2 token endpoint (client-credentials grant), cached until shortly before they expire,
 * and replaced once when the receiver answers 401 to a token that has not yet expired.
 *
 * <p>One token is shared by every object the destination serves; the lock makes one thread fetch while the others
 * wait for its result instead of each asking the endpoint.
 */
public final class OAuth2Authorizer implements Authorizer {

    private static final Logger LOG = LoggerFactory.getLogger(OAuth2Authorizer.class);

    private final OAuth2Settings settings;
    private final HttpClient client;
    private final Duration timeout;
    private final Clock clock;
    private final String endpoint;
    private Token token;

    public OAuth2Authorizer(OAuth2Settings settings, HttpClient client, Duration timeout, Clock clock) {
        this.settings = settings;
        this.client = client;
        this.timeout = timeout;
        this.clock = clock;
        this.endpoint = Endpoints.describe(settings.tokenUrl());
    }

    private record Token(String value, Instant refreshAt) {
    }

    @Override
    public void authorize(HttpRequest.Builder request) throws InterruptedException {
        request.setHeader("Authorization", "Bearer " + currentToken());
    }

    @Override
    public synchronized boolean renewAfterRejection(HttpRequest refused) {
        // Another thread may already have replaced the token the receiver refused; only drop the one that was refused.
        String sent = refused.headers().firstValue("Authorization").orElse("");
        if (token != null && sent.equals("Bearer " + token.value())) {
            token = null;
        }
        LOG.info("The webhook receiver answered 401 to the OAuth2 access token; asking {} for a new one", endpoint);
        return true;
    }

    @Override
    public synchronized List<String> secrets() {
        List<String> secrets = new ArrayList<>(3);
        secrets.add(settings.clientSecret());
        if (token != null) {
            secrets.add(token.value());
        }
        return secrets;
    }

    synchronized String currentToken() throws InterruptedException {
        if (token == null || !clock.instant().isBefore(token.refreshAt())) {
            token = fetch();
        }
        return token.value();
    }

    private Token fetch() throws InterruptedException {
        Instant asked = clock.instant();
        HttpResponse<String> response;
        try {
            response = client.send(tokenRequest(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (HttpTimeoutException e) {
            throw DeliveryException.retryable("the OAuth2 token endpoint " + endpoint + " did not answer within "
                    + timeout, e);
        } catch (IOException e) {
            throw DeliveryException.retryable("could not reach the OAuth2 token endpoint " + endpoint + ": " + e, e);
        }
        int status = response.statusCode();
        if (!Statuses.accepted(status)) {
            String detail = oauthError(response.body());
            String message = "the OAuth2 token endpoint " + endpoint + " answered HTTP " + status + detail;
            if (Statuses.retryable(status)) {
                Optional<Duration> after = RetryAfter.parse(
                        response.headers().firstValue("Retry-After").orElse(null), clock.instant());
                throw after.isPresent() ? DeliveryException.retryableAfter(message, after.get())
                        : DeliveryException.retryable(message, null);
            }
            throw DeliveryException.fatal(message + "; check the client id, the client secret and how it is sent"
                    + " (basic or body)", null);
        }
        return parse(response.body(), asked);
    }

    private HttpRequest tokenRequest() {
        StringBuilder form = new StringBuilder("grant_type=client_credentials");
        if (settings.scope() != null) {
            form.append("&scope=").append(encode(settings.scope()));
        }
        if (settings.audience() != null) {
            form.append("&audience=").append(encode(settings.audience()));
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(settings.tokenUrl())
                .timeout(timeout)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Accept", "application/json");
        if (settings.secretInBody()) {
            form.append("&client_id=").append(encode(settings.clientId()))
                    .append("&client_secret=").append(encode(settings.clientSecret()));
        } else {
            // RFC 6749, 2.3.1: both are form-encoded before they are joined for HTTP basic.
            String pair = encode(settings.clientId()) + ":" + encode(settings.clientSecret());
            request.header("Authorization", "Basic "
                    + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
        }
        return request.POST(HttpRequest.BodyPublishers.ofString(form.toString(), StandardCharsets.UTF_8)).build();
    }

    private Token parse(String body, Instant asked) {
        JsonNode json;
        try {
            json = Json.MAPPER.readTree(body);
        } catch (IOException e) {
            json = null;
        }
        if (json == null || !json.path("access_token").isTextual() || json.path("access_token").asText().isEmpty()) {
            throw DeliveryException.fatal("the OAuth2 token endpoint " + endpoint
                    + " answered without an access_token; is tokenUrl the token endpoint?", null);
        }
        String type = json.path("token_type").asText("Bearer");
        if (!type.equalsIgnoreCase("bearer")) {
            throw DeliveryException.fatal("the OAuth2 token endpoint " + endpoint + " issued a token of type '"
                    + type + "'; the webhook sends bearer tokens only", null);
        }
        String value = json.get("access_token").asText();
        Instant refreshAt = Instant.MAX;
        if (json.path("expires_in").canConvertToLong()) {
            Duration lifetime = Duration.ofSeconds(Math.max(0, json.get("expires_in").asLong()));
            // Replace it refreshBefore ahead of expiry, or half-way through a lifetime shorter than twice that.
            Duration margin = settings.refreshBefore().multipliedBy(2).compareTo(lifetime) <= 0
                    ? settings.refreshBefore() : lifetime.dividedBy(2);
            refreshAt = asked.plus(lifetime).minus(margin);
            LOG.debug("Fetched an OAuth2 access token from {}, valid for {} s", endpoint, lifetime.getSeconds());
        } else {
            LOG.debug("Fetched an OAuth2 access token from {} without expires_in; it is kept until refused", endpoint);
        }
        return new Token(value, refreshAt);
    }

    private static String oauthError(String body) {
        try {
            JsonNode json = Json.MAPPER.readTree(body == null ? "" : body);
            if (json != null && json.path("error").isTextual()) {
                // RFC 6749, 5.2: error is an ASCII code such as invalid_client; the description is left out, as a
                // server may echo what it was sent.
                String code = json.get("error").asText().replaceAll("[^A-Za-z0-9_.-]", "");
                return " (error " + code + ")";
            }
        } catch (IOException e) {
            // not JSON: nothing to add
        }
        return "";
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return settings.toString();
    }
}
