package io.tidemark.destinations.webhook;

import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import static io.tidemark.destinations.webhook.WebhookReceiver.CLIENT_ID;
import static io.tidemark.destinations.webhook.WebhookReceiver.CLIENT_SECRET;
import static io.tidemark.destinations.webhook.WebhookReceiver.echoHeaders;
import static io.tidemark.destinations.webhook.WebhookReceiver.reset;
import static io.tidemark.destinations.webhook.WebhookReceiver.slow;
import static io.tidemark.destinations.webhook.WebhookReceiver.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * No secret in toString(), in any exception message (causes included) or in the log, on the success path and on
 * every failure path, even when the receiver echoes the request's headers back in its error page.
 */
class WebhookSecretsTest {

    private static final String BEARER = "bearer-SECRET-7Hq2";
    private static final String PASSWORD = "basic-SECRET-9Zx4";
    private static final String API_KEY = "apikey-SECRET-3Lm8";
    private static final String SIGNING = "whsec_" + Base64.getEncoder().encodeToString(
            "signing-SECRET-key-32-bytes-long".getBytes(StandardCharsets.US_ASCII));

    private final WebhookReceiver receiver = new WebhookReceiver();
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private final List<String> seen = new ArrayList<>();
    private PrintStream stderr;

    @BeforeEach
    void captureLog() {
        // slf4j-simple writes to whatever System.err is when it logs; the webhook logs at debug in these tests.
        stderr = System.err;
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setErr(stderr);
        receiver.close();
    }

    private List<String> secrets() {
        List<String> all = new ArrayList<>(List.of(BEARER, PASSWORD, API_KEY, SIGNING, SIGNING.substring(6),
                CLIENT_SECRET, "access-token-", Base64.getEncoder().encodeToString(
                        ("tidemark:" + PASSWORD).getBytes(StandardCharsets.UTF_8))));
        return all;
    }

    private WebhookDestination exercise(WebhookAuth auth) {
        WebhookDestination hook = WebhookDestination.builder().url(receiver.url()).auth(auth).signingSecret(SIGNING)
                .header("X-Tenant", "acme").requestTimeout(Duration.ofMillis(1500)).build();
        exercise(hook);
        seen.add(auth.toString());
        return hook;
    }

    private void exercise(WebhookDestination hook) {
        seen.add(hook.toString());
        receiver.then(echoHeaders(), status(500), status(429, "Retry-After", "3"), reset(), slow(Duration.ofSeconds(8)),
                status(200));
        for (int i = 0; i < 6; i++) {
            try {
                hook.deliver(WebhookPages.page(3));
            } catch (Exception e) {
                for (Throwable t = e; t != null; t = t.getCause()) {
                    seen.add(String.valueOf(t.getMessage()));
                    seen.add(t.toString());
                }
            }
        }
    }

    @Test
    void fixed_credentials_never_leak() {
        exercise(WebhookAuth.bearer(BEARER));
        exercise(WebhookAuth.basic("tidemark", PASSWORD));
        exercise(WebhookAuth.apiKey("X-Api-Key", API_KEY));

        assertThat(receiver.accepted()).hasSize(3);
        // The echo really carried the credentials back, so the check below is not vacuous.
        assertThat(receiver.received().get(0).header("authorization")).isEqualTo("Bearer " + BEARER);
        assertThat(seen).anyMatch(m -> m.contains("HTTP 400") && m.contains("Authorization") && m.contains("***"));
        assertNoSecret();
    }

    @Test
    void oauth2_credentials_and_tokens_never_leak() {
        receiver.requireToken();
        WebhookAuth auth = WebhookAuth.oauth2ClientCredentials(receiver.tokenUrl(), CLIENT_ID, CLIENT_SECRET);
        WebhookDestination hook = exercise(auth);
        receiver.revokeTokens(); // a 401 and a refresh, which is logged
        exercise(hook);
        // The token endpoint's error description repeats the secret it was sent; it must not come through.
        exercise(WebhookAuth.oauth2ClientCredentials(receiver.tokenUrl(), CLIENT_ID, CLIENT_SECRET + "-wrong"));

        assertThat(receiver.tokensIssued()).isGreaterThanOrEqualTo(2);
        assertThat(seen).anyMatch(m -> m.contains("invalid_client"));
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("answered 401");
        assertNoSecret();
    }

    @Test
    void configuration_errors_do_not_repeat_secrets() {
        String badSigning = "whsec_" + Base64.getEncoder().encodeToString("short-SECRET".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> WebhookDestination.builder().url(receiver.url())
                .auth(WebhookAuth.bearer("line\nbreak-SECRET")).signingSecrets(List.of(badSigning, "plain-SECRET"))
                .build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains("signing secret 1").contains("signing secret 2")
                        .contains("line break").doesNotContain("SECRET"));
    }

    private void assertNoSecret() {
        seen.add(log.toString(StandardCharsets.UTF_8));
        for (String text : seen) {
            for (String secret : secrets()) {
                assertThat(text).as("text that must not hold a secret").doesNotContain(secret);
            }
        }
    }
}
