package io.tidemark.destinations.webhook;

import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.tidemark.destinations.webhook.WebhookReceiver.CLIENT_ID;
import static io.tidemark.destinations.webhook.WebhookReceiver.CLIENT_SECRET;
import static io.tidemark.destinations.webhook.WebhookReceiver.slow;
import static io.tidemark.destinations.webhook.WebhookReceiver.status;
import static io.tidemark.destinations.webhook.WebhookReceiver.statusWithBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** OAuth2 client credentials against a token endpoint on the same loopback server as the receiver. */
class WebhookOAuth2Test {

    private final WebhookReceiver receiver = new WebhookReceiver().requireToken();
    private final WebhookTestClock clock = new WebhookTestClock(Instant.parse("2026-12-01T10:00:00Z"));

    @AfterEach
    void stop() {
        receiver.close();
    }

    private WebhookAuth oauth2() {
        return WebhookAuth.oauth2ClientCredentials(receiver.tokenUrl(), CLIENT_ID, CLIENT_SECRET);
    }

    private WebhookDestination webhook(WebhookAuth auth) {
        return WebhookDestination.builder().url(receiver.url()).auth(auth).clock(clock)
                .requestTimeout(Duration.ofSeconds(5)).build();
    }

    @Test
    void the_token_is_fetched_once_and_reused_while_valid() throws Exception {
        WebhookDestination hook = webhook(oauth2());
        for (int i = 0; i < 4; i++) {
            hook.deliver(WebhookPages.page(2));
            clock.advance(Duration.ofMinutes(10));
        }
        assertThat(receiver.tokensIssued()).isEqualTo(1);
        assertThat(receiver.accepted()).hasSize(4)
                .allMatch(r -> r.header("authorization").equals("Bearer access-token-1-Kp3v"));
    }

    @Test
    void the_token_is_replaced_before_it_expires() throws Exception {
        receiver.tokenLifetime(300);
        WebhookDestination hook = webhook(oauth2().refreshBefore(Duration.ofSeconds(60)));
        hook.deliver(WebhookPages.page(2));
        clock.advance(Duration.ofSeconds(239));
        hook.deliver(WebhookPages.page(2));
        assertThat(receiver.tokensIssued()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1)); // 240 s: 60 s before the expiry at 300 s
        hook.deliver(WebhookPages.page(2));
        assertThat(receiver.tokensIssued()).isEqualTo(2);
        assertThat(receiver.accepted()).extracting(r -> r.header("authorization")).containsExactly(
                "Bearer access-token-1-Kp3v", "Bearer access-token-1-Kp3v", "Bearer access-token-2-Kp3v");
    }

    @Test
    void a_short_lived_token_is_replaced_half_way_through_its_life() throws Exception {
        receiver.tokenLifetime(20);
        WebhookDestination hook = webhook(oauth2());
        hook.deliver(WebhookPages.page(2));
        clock.advance(Duration.ofSeconds(9));
        hook.deliver(WebhookPages.page(2));
        clock.advance(Duration.ofSeconds(1));
        hook.deliver(WebhookPages.page(2));
        assertThat(receiver.tokensIssued()).isEqualTo(2);
    }

    @Test
    void a_401_fetches_a_new_token_once_and_sends_the_same_request_again() throws Exception {
        WebhookDestination hook = webhook(oauth2());
        hook.deliver(WebhookPages.page(2));
        receiver.revokeTokens();

        hook.deliver(WebhookPages.page(3));

        assertThat(receiver.tokensIssued()).isEqualTo(2);
        assertThat(receiver.received()).extracting(WebhookReceiver.Received::status).containsExactly(200, 401, 200);
        WebhookReceiver.Received refused = receiver.received().get(1);
        WebhookReceiver.Received resent = receiver.received().get(2);
        assertThat(resent.header("webhook-id")).isEqualTo(refused.header("webhook-id"));
        assertThat(resent.body()).isEqualTo(refused.body());
        assertThat(resent.header("authorization")).isEqualTo("Bearer access-token-2-Kp3v");
    }

    @Test
    void threads_sharing_the_destination_share_one_token_and_one_refresh() throws Exception {
        WebhookDestination hook = webhook(oauth2());
        concurrently(hook, 4, 5);
        assertThat(receiver.tokensIssued()).isEqualTo(1);

        receiver.revokeTokens();
        concurrently(hook, 4, 5);
        // Every thread's first request was refused with token 1; one new token serves them all.
        assertThat(receiver.tokensIssued()).isEqualTo(2);
        assertThat(receiver.accepted()).hasSize(40);
    }

    private static void concurrently(WebhookDestination hook, int threads, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        hook.deliver(WebhookPages.page("Object" + thread, 100 + i * 10, 5, 1, 1, i));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void a_second_401_with_a_fresh_token_is_fatal() {
        receiver.refuseAllTokens();
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook(oauth2()).deliver(WebhookPages.page(2)));
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.getMessage()).contains("HTTP 401").contains("freshly issued token was refused");
        assertThat(receiver.received()).hasSize(2);
        assertThat(receiver.tokensIssued()).isEqualTo(2);
    }

    @Test
    void the_client_secret_goes_as_http_basic_by_default_with_scope_and_audience_in_the_form() throws Exception {
        webhook(oauth2().scope("changes:write").audience("https://hooks.example.com")).deliver(WebhookPages.page(1));

        Map<String, String> request = receiver.tokenRequests().get(0);
        assertThat(request).containsEntry("grant_type", "client_credentials")
                .containsEntry("scope", "changes:write").containsEntry("audience", "https://hooks.example.com")
                .doesNotContainKeys("client_id", "client_secret");
        assertThat(request.get("Authorization")).isEqualTo("Basic " + Base64.getEncoder().encodeToString(
                (CLIENT_ID + ":" + CLIENT_SECRET).getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void the_client_secret_can_go_in_the_form_body() throws Exception {
        webhook(oauth2().secretInBody()).deliver(WebhookPages.page(1));

        Map<String, String> request = receiver.tokenRequests().get(0);
        assertThat(request).containsEntry("grant_type", "client_credentials")
                .containsEntry("client_id", CLIENT_ID).containsEntry("client_secret", CLIENT_SECRET)
                .doesNotContainKeys("Authorization", "scope", "audience");
        assertThat(receiver.accepted()).hasSize(1);
    }

    @Test
    void rejected_client_credentials_are_fatal_and_name_the_oauth_error_without_the_secret() {
        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> webhook(
                WebhookAuth.oauth2ClientCredentials(receiver.tokenUrl(), CLIENT_ID, "wrong-secret-Hq7"))
                .deliver(WebhookPages.page(1)));
        assertThat(e.isRetryable()).as(e.getMessage()).isFalse();
        assertThat(e.getMessage()).contains("HTTP 401").contains("invalid_client").doesNotContain("wrong-secret-Hq7");
        assertThat(receiver.received()).isEmpty();
    }

    @Test
    void a_token_endpoint_that_is_down_or_slow_is_retryable_and_the_next_attempt_fetches_again() throws Exception {
        receiver.thenToken(status(503, "Retry-After", "12"), slow(Duration.ofSeconds(8)));
        WebhookDestination hook = WebhookDestination.builder().url(receiver.url()).auth(oauth2()).clock(clock)
                .requestTimeout(Duration.ofMillis(1500)).build();

        DeliveryException down = catchThrowableOfType(DeliveryException.class,
                () -> hook.deliver(WebhookPages.page(1)));
        assertThat(down.isRetryable()).isTrue();
        assertThat(down.retryAfter()).contains(Duration.ofSeconds(12));
        DeliveryException slow = catchThrowableOfType(DeliveryException.class,
                () -> hook.deliver(WebhookPages.page(1)));
        assertThat(slow.isRetryable()).isTrue();
        assertThat(slow.getMessage()).contains("did not answer");

        hook.deliver(WebhookPages.page(1));
        assertThat(receiver.accepted()).hasSize(1);
        assertThat(receiver.tokenRequests()).hasSize(3);
    }

    @Test
    void a_token_endpoint_answer_without_an_access_token_is_fatal() {
        receiver.thenToken(statusWithBody(200, "<html>login page</html>"));
        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook(oauth2()).deliver(WebhookPages.page(1)));
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.getMessage()).contains("without an access_token");
    }
}
