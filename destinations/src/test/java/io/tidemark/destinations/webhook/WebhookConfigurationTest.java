package io.tidemark.destinations.webhook;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** build() checks everything at once and reports every problem in one INVALID_CONFIGURATION error. */
class WebhookConfigurationTest {

    @Test
    void every_problem_is_reported_at_once() {
        TidemarkException e = catchThrowableOfType(TidemarkException.class, () -> WebhookDestination.builder()
                .url("ftp://example.com/x")
                .header("Content-Type", "text/plain")
                .header("Bad Header", "x")
                .header("X-Multi", "a\r\nX-Forged: 1")
                .connectTimeout(Duration.ZERO)
                .requestTimeout(Duration.ofSeconds(-1))
                .signingSecret("not-a-whsec-secret")
                .maxRequestBytes(100)
                .clock(null)
                .build());

        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(e.getMessage()).startsWith("WebhookDestination has 9 configuration problems:")
                .contains("url must be an absolute http or https URL, got ftp://example.com/x")
                .contains("header 'Content-Type' is set by the webhook itself")
                .contains("header name 'Bad Header' is not a valid HTTP header name")
                .contains("header 'X-Multi' must have a value without line breaks")
                .contains("connectTimeout must be a positive duration")
                .contains("requestTimeout must be a positive duration")
                .contains("signing secret 1 must have the Standard Webhooks form whsec_<base64 key>")
                .contains("maxRequestBytes must be 0 (no splitting) or at least 1024, got 100")
                .contains("clock must not be null");
    }

    @Test
    void the_url_is_required_and_must_not_carry_user_info() {
        assertThatThrownBy(() -> WebhookDestination.builder().build())
                .hasMessage("WebhookDestination: url is required: the endpoint to POST pages to");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://user:pw-123@example.com/hook").build())
                .hasMessageContaining("must not carry user info").hasMessageNotContaining("pw-123");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://exa mple.com/").build())
                .hasMessageContaining("url is not a valid URI");
    }

    @Test
    void signing_secrets_need_a_key_of_24_to_64_bytes() {
        String short16 = "whsec_" + java.util.Base64.getEncoder().encodeToString(new byte[16]);
        String long65 = "whsec_" + java.util.Base64.getEncoder().encodeToString(new byte[65]);
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h")
                .signingSecrets(Arrays.asList(short16, long65, "whsec_!!!")).build())
                .hasMessageContaining("signing secret 1 must hold a key of 24 to 64 bytes, has 16")
                .hasMessageContaining("signing secret 2 must hold a key of 24 to 64 bytes, has 65")
                .hasMessageContaining("signing secret 3 is not valid base64 after whsec_");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h").signingSecret(null).build())
                .hasMessageContaining("signingSecrets must not contain null");
    }

    @Test
    void credentials_are_checked_and_may_not_collide_with_headers() {
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h")
                .auth(WebhookAuth.bearer(" ")).build()).hasMessageContaining("auth bearer token must not be blank");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h")
                .auth(WebhookAuth.basic("a:b", "pw")).build()).hasMessageContaining("must not contain ':'");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h")
                .auth(WebhookAuth.apiKey("webhook-id", "k")).build())
                .hasMessageContaining("auth apiKey header 'webhook-id' is set by the webhook itself");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h").header("authorization", "x")
                .auth(WebhookAuth.bearer("t-1234")).build())
                .hasMessageContaining("header 'Authorization' is set by auth bearer token (hidden)");
        assertThatThrownBy(() -> WebhookDestination.builder().url("http://localhost/h")
                .auth(WebhookAuth.oauth2ClientCredentials(URI.create("token"), "", null).scope(" ")
                        .refreshBefore(Duration.ofSeconds(-1))).build())
                .hasMessageContaining("auth oauth2 tokenUrl must be an absolute http or https URL")
                .hasMessageContaining("auth oauth2 clientId must not be blank")
                .hasMessageContaining("auth oauth2 clientSecret must not be blank")
                .hasMessageContaining("auth oauth2 scope must not be blank when given")
                .hasMessageContaining("auth oauth2 refreshBefore must be zero or positive");
    }

    @Test
    void oauth2_options_on_other_credentials_are_a_wiring_error() {
        assertThatThrownBy(() -> WebhookAuth.bearer("t").scope("x")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("oauth2ClientCredentials only");
    }

    @Test
    void to_string_describes_the_configuration_without_secrets() {
        WebhookDestination hook = WebhookDestination.builder().url("https://hooks.example.com/in?token=q-SECRET")
                .header("X-Tenant", "acme-SECRET").auth(WebhookAuth.oauth2ClientCredentials(
                        URI.create("https://auth.example.com/token"), "tidemark", "cs-SECRET").scope("write"))
                .signingSecret("whsec_" + java.util.Base64.getEncoder().encodeToString(new byte[32]))
                .gzip(true).maxRequestBytes(65536).build();
        assertThat(hook.toString())
                .isEqualTo("WebhookDestination[POST https://hooks.example.com/in?…, auth OAuth2 client credentials"
                        + " (client 'tidemark', token endpoint https://auth.example.com/token, secret sent as HTTP"
                        + " basic, scope 'write'), headers [X-Tenant] (values hidden), signed: Standard Webhooks v1"
                        + " signer (1 secret), gzip, at most 65536 bytes per request, connectTimeout PT10S,"
                        + " requestTimeout PT30S]")
                .doesNotContain("SECRET");
    }
}
