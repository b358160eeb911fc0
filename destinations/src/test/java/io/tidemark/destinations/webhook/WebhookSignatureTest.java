package io.tidemark.destinations.webhook;

import io.tidemark.destinations.webhook.internal.WebhookSigner;
import io.tidemark.sync.ChangeBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Standard Webhooks signatures, checked by the test's own verifier written from the specification. */
class WebhookSignatureTest {

    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "a signing key of 32 bytes length".getBytes(StandardCharsets.US_ASCII));
    private static final String OLD_SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "the key being rotated out, 40 bytes long".getBytes(StandardCharsets.US_ASCII));
    private static final Instant NOW = Instant.parse("2026-12-01T10:15:30Z");

    private final WebhookReceiver receiver = new WebhookReceiver();
    private final WebhookTestClock clock = new WebhookTestClock(NOW);

    @AfterEach
    void stop() {
        receiver.close();
    }

    private static boolean verifies(String secret, WebhookReceiver.Received r, byte[] body) {
        return WebhookSignatureVerifier.verify(secret, r.header("webhook-id"), r.header("webhook-timestamp"), body,
                r.header("webhook-signature"));
    }

    @Test
    void the_signature_verifies_over_id_timestamp_and_the_exact_body() throws Exception {
        WebhookDestination hook = WebhookDestination.builder().url(receiver.url()).clock(clock)
                .signingSecret(SECRET).build();
        hook.deliver(WebhookPages.page(40));

        WebhookReceiver.Received r = receiver.received().get(0);
        assertThat(r.header("webhook-signature")).matches("v1,[A-Za-z0-9+/]{43}=");
        assertThat(verifies(SECRET, r, r.body())).isTrue();
        // Any change to what was signed breaks it: the body, the id, the timestamp, the key.
        byte[] tampered = r.body().clone();
        tampered[tampered.length / 2] ^= 1;
        assertThat(verifies(SECRET, r, tampered)).isFalse();
        assertThat(WebhookSignatureVerifier.verify(SECRET, r.header("webhook-id") + "x", r.header("webhook-timestamp"),
                r.body(), r.header("webhook-signature"))).isFalse();
        assertThat(WebhookSignatureVerifier.verify(SECRET, r.header("webhook-id"),
                Long.toString(NOW.getEpochSecond() + 1), r.body(), r.header("webhook-signature"))).isFalse();
        assertThat(verifies(OLD_SECRET, r, r.body())).isFalse();
    }

    @Test
    void with_gzip_the_signature_is_over_the_json_payload_the_receiver_reads_after_decompressing() throws Exception {
        WebhookDestination.builder().url(receiver.url()).clock(clock).signingSecret(SECRET).gzip(true).build()
                .deliver(WebhookPages.page(40));

        WebhookReceiver.Received r = receiver.received().get(0);
        assertThat(r.header("content-encoding")).isEqualTo("gzip");
        assertThat(verifies(SECRET, r, r.body())).isTrue();
        assertThat(verifies(SECRET, r, r.raw())).isFalse();
    }

    @Test
    void during_a_rotation_each_secret_signs_and_either_verifies() throws Exception {
        WebhookDestination.builder().url(receiver.url()).clock(clock).signingSecrets(List.of(SECRET, OLD_SECRET))
                .build().deliver(WebhookPages.page(3));

        WebhookReceiver.Received r = receiver.received().get(0);
        String[] signatures = r.header("webhook-signature").split(" ");
        assertThat(signatures).hasSize(2).allMatch(s -> s.startsWith("v1,"));
        assertThat(verifies(SECRET, r, r.body())).isTrue();
        assertThat(verifies(OLD_SECRET, r, r.body())).isTrue();
        // Each entry belongs to its own secret: the first to the new one, the second to the old one.
        assertThat(WebhookSignatureVerifier.verify(OLD_SECRET, r.header("webhook-id"), r.header("webhook-timestamp"),
                r.body(), signatures[0])).isFalse();
        assertThat(WebhookSignatureVerifier.verify(OLD_SECRET, r.header("webhook-id"), r.header("webhook-timestamp"),
                r.body(), signatures[1])).isTrue();
    }

    @Test
    void a_redelivery_is_signed_anew_with_its_new_timestamp_under_the_same_id() throws Exception {
        receiver.then(WebhookReceiver.status(503));
        WebhookDestination hook = WebhookDestination.builder().url(receiver.url()).clock(clock).signingSecret(SECRET)
                .build();
        ChangeBatch batch = WebhookPages.page(5);
        try {
            hook.deliver(batch);
        } catch (Exception expected) {
            // retried below, as the engine would
        }
        clock.advance(Duration.ofSeconds(30));
        hook.deliver(batch);

        List<WebhookReceiver.Received> all = receiver.received();
        assertThat(all).hasSize(2);
        assertThat(all.get(0).header("webhook-id")).isEqualTo(all.get(1).header("webhook-id"));
        assertThat(all.get(1).header("webhook-timestamp")).isEqualTo(Long.toString(NOW.getEpochSecond() + 30));
        assertThat(all.get(0).header("webhook-signature")).isNotEqualTo(all.get(1).header("webhook-signature"));
        assertThat(all).allMatch(r -> verifies(SECRET, r, r.body()));
    }

    @Test
    void the_signer_and_the_independent_verifier_agree_on_a_fixed_vector() {
        String secret = "whsec_" + Base64.getEncoder().encodeToString(new byte[32]);
        byte[] body = "{\"test\":2432232314}".getBytes(StandardCharsets.UTF_8);
        String header = WebhookSigner.of(List.of(secret)).signature("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330L, body);
        byte[] expected = WebhookSignatureVerifier.sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body);
        assertThat(header).isEqualTo("v1," + Base64.getEncoder().encodeToString(expected));
        assertThat(Arrays.equals(expected, new byte[32])).isFalse();
    }
}
