package io.tidemark.destinations.webhook;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;

import static io.tidemark.destinations.webhook.WebhookReceiver.reset;
import static io.tidemark.destinations.webhook.WebhookReceiver.slow;
import static io.tidemark.destinations.webhook.WebhookReceiver.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The webhook against a real HTTP server on loopback: what it sends, and what each kind of answer means. */
class WebhookDeliveryTest {

    private static final Instant NOW = Instant.parse("2026-12-01T10:15:30Z");

    private final WebhookReceiver receiver = new WebhookReceiver();
    private final WebhookTestClock clock = new WebhookTestClock(NOW);

    @AfterEach
    void stop() {
        receiver.close();
    }

    private WebhookDestination.Builder webhook() {
        return WebhookDestination.builder().url(receiver.url()).clock(clock)
                .requestTimeout(Duration.ofSeconds(5)).connectTimeout(Duration.ofSeconds(5));
    }

    @Test
    void posts_the_pages_envelope_as_json_with_the_standard_webhooks_headers() throws Exception {
        ChangeBatch batch = WebhookPages.page(25);
        webhook().header("X-Tenant", "acme").build().deliver(batch);

        assertThat(receiver.received()).hasSize(1);
        WebhookReceiver.Received request = receiver.received().get(0);
        assertThat(request.body()).isEqualTo(Envelope.toBytes(batch));
        assertThat(request.header("content-type")).isEqualTo("application/json");
        assertThat(request.header("webhook-id")).isEqualTo(batch.idempotencyKey());
        assertThat(request.header("webhook-timestamp")).isEqualTo(Long.toString(NOW.getEpochSecond()));
        assertThat(request.header("webhook-signature")).isNull();
        assertThat(request.header("content-encoding")).isNull();
        assertThat(request.header("x-tenant")).isEqualTo("acme");
        assertThat(request.header("authorization")).isNull();
    }

    @Test
    void the_same_page_delivered_again_carries_the_same_id_and_a_new_timestamp() throws Exception {
        ChangeBatch batch = WebhookPages.page(3);
        WebhookDestination hook = webhook().build();
        hook.deliver(batch);
        clock.advance(Duration.ofSeconds(42));
        hook.deliver(WebhookPages.page(3));

        assertThat(receiver.received()).extracting(r -> r.header("webhook-id"))
                .containsExactly(batch.idempotencyKey(), batch.idempotencyKey());
        assertThat(receiver.received()).extracting(r -> r.header("webhook-timestamp"))
                .containsExactly(Long.toString(NOW.getEpochSecond()), Long.toString(NOW.getEpochSecond() + 42));
    }

    @Test
    void gzip_compresses_the_body_and_says_so() throws Exception {
        ChangeBatch batch = WebhookPages.page(200);
        webhook().gzip(true).build().deliver(batch);

        WebhookReceiver.Received request = receiver.received().get(0);
        assertThat(request.header("content-encoding")).isEqualTo("gzip");
        assertThat(request.raw()[0] & 0xff).isEqualTo(0x1f);
        assertThat(request.raw()[1] & 0xff).isEqualTo(0x8b);
        assertThat(request.raw().length).isLessThan(request.body().length / 2);
        assertThat(request.body()).isEqualTo(Envelope.toBytes(batch));
    }

    @Test
    void bearer_basic_and_api_key_credentials_go_in_their_headers() throws Exception {
        webhook().auth(WebhookAuth.bearer("tok-123456")).build().deliver(WebhookPages.page(1));
        webhook().auth(WebhookAuth.basic("tidemark", "pä:ss")).build().deliver(WebhookPages.page(1));
        webhook().auth(WebhookAuth.apiKey("X-Api-Key", "key-98765")).build().deliver(WebhookPages.page(1));

        assertThat(receiver.received().get(0).header("authorization")).isEqualTo("Bearer tok-123456");
        assertThat(receiver.received().get(1).header("authorization")).isEqualTo("Basic "
                + Base64.getEncoder().encodeToString("tidemark:pä:ss".getBytes(StandardCharsets.UTF_8)));
        assertThat(receiver.received().get(2).header("x-api-key")).isEqualTo("key-98765");
        assertThat(receiver.received().get(2).header("authorization")).isNull();
    }

    @Test
    void requests_reuse_one_persistent_connection() throws Exception {
        WebhookDestination hook = webhook().build();
        for (int i = 0; i < 5; i++) {
            hook.deliver(WebhookPages.page("Items", 100 + i * 10, 10, 1, 1, i));
        }
        assertThat(receiver.received()).extracting(WebhookReceiver.Received::remotePort).containsOnly(
                receiver.received().get(0).remotePort());
    }

    @ParameterizedTest
    @ValueSource(ints = {200, 201, 202, 204, 299})
    void any_2xx_is_accepted(int status) throws Exception {
        receiver.then(status(status));
        webhook().build().deliver(WebhookPages.page(2));
        assertThat(receiver.received()).hasSize(1);
    }

    @ParameterizedTest
    @ValueSource(ints = {408, 425, 429, 500, 502, 503, 504})
    void timeouts_throttling_and_server_errors_are_retryable(int status) {
        receiver.then(status(status));
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook().build().deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.code()).isEqualTo(ErrorCode.DESTINATION_FAILED);
        assertThat(e.retryAfter()).isEmpty();
        assertThat(e.getMessage()).contains("HTTP " + status).contains("page 1/1 of object 'Items'")
                .contains(receiver.url().toString());
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 403, 404, 405, 409, 410, 413, 422, 301, 302, 307})
    void other_4xx_and_redirects_are_fatal(int status) {
        receiver.then(status == 301 || status == 302 || status == 307
                ? status(status, "Location", "http://127.0.0.1:1/elsewhere") : status(status));
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook().build().deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.getMessage()).contains("HTTP " + status);
        assertThat(receiver.received()).hasSize(1);
    }

    @Test
    void a_401_without_renewable_credentials_is_fatal() {
        receiver.then(status(401));
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook().auth(WebhookAuth.bearer("tok-123456")).build().deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isFalse();
        assertThat(receiver.received()).hasSize(1);
    }

    @Test
    void the_receivers_error_text_is_part_of_the_message() {
        receiver.then(WebhookReceiver.statusWithBody(422, "{\"error\":\"Price must be positive\"}"));
        assertThatThrownBy(() -> webhook().build().deliver(WebhookPages.page(2)))
                .hasMessageContaining("HTTP 422").hasMessageContaining("Price must be positive");
    }

    @Test
    void retry_after_in_seconds_is_passed_on() {
        receiver.then(status(429, "Retry-After", "7"));
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook().build().deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.retryAfter()).contains(Duration.ofSeconds(7));
        assertThat(e.getMessage()).contains("HTTP 429").contains("retry after 7 s");
    }

    @Test
    void retry_after_as_an_http_date_is_measured_from_the_injected_clock() {
        receiver.then(status(503, "Retry-After", "Tue, 01 Dec 2026 10:17:00 GMT"));
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook().build().deliver(WebhookPages.page(2)));
        assertThat(e.retryAfter()).contains(Duration.ofSeconds(90));
    }

    @Test
    void a_response_slower_than_the_request_timeout_is_retryable() throws Exception {
        WebhookDestination hook = webhook().requestTimeout(Duration.ofMillis(1000)).build();
        hook.deliver(WebhookPages.page(2)); // the first request pays for loading the HTTP client's classes
        receiver.then(slow(Duration.ofSeconds(8)));
        long started = System.nanoTime();
        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> hook.deliver(WebhookPages.page(2)));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.getCause()).isInstanceOf(HttpTimeoutException.class);
        assertThat(e.getMessage()).contains("did not answer").contains("requestTimeout PT1S");
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void a_connection_dropped_without_an_answer_is_retryable_and_the_next_delivery_goes_through(boolean handlerFails)
            throws Exception {
        receiver.then(handlerFails ? reset() : WebhookReceiver.closeWithoutAnswer());
        WebhookDestination hook = webhook().build();
        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> hook.deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.getCause()).isInstanceOf(IOException.class);

        hook.deliver(WebhookPages.page(2));
        assertThat(receiver.accepted()).hasSize(1);
    }

    @Test
    void a_refused_connection_is_retryable() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        WebhookDestination hook = WebhookDestination.builder().url(URI.create("http://127.0.0.1:" + port + "/hook"))
                .connectTimeout(Duration.ofSeconds(2)).build();
        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> hook.deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.getMessage()).contains("failed");
    }
}
