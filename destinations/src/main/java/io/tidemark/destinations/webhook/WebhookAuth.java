package io.tidemark.destinations.webhook;

import io.tidemark.destinations.webhook.internal.Authorizer;
import io.tidemark.destinations.webhook.internal.Endpoints;
import io.tidemark.destinations.webhook.internal.HeaderAuthorizer;
import io.tidemark.destinations.webhook.internal.HeaderRules;
import io.tidemark.destinations.webhook.internal.OAuth2Authorizer;
import io.tidemark.destinations.webhook.internal.OAuth2Settings;
import io.tidemark.sync.internal.config.Checks;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;

/**
 * How the webhook proves who it is to the receiver: nothing, a bearer token, HTTP basic, an API key in a header of
 * your choice, or an OAuth2 access token obtained with the client-credentials grant.
 *
 * <p>Immutable. The factories only store what they are given; {@link WebhookDestination.Builder#build()} checks it
 * with the rest of the configuration. {@link #toString()} never shows a secret.
 *
 * <pre>{@code
 * WebhookAuth.bearer(token)
 * WebhookAuth.basic("tidemark", password)
 * WebhookAuth.apiKey("X-Api-Key", key)
 * WebhookAuth.oauth2ClientCredentials(URI.create("https://auth.example.com/oauth/token"), "tidemark", secret)
 *            .scope("changes:write").audience("https://hooks.example.com").secretInBody()
 * }</pre>
 */
public final class WebhookAuth {

    /** How long before a token's expiry it is replaced, unless {@link #refreshBefore} says otherwise. */
    public static final Duration DEFAULT_REFRESH_BEFORE = Duration.ofSeconds(30);

    private enum Kind { NONE, BEARER, BASIC, API_KEY, OAUTH2 }

    private final Kind kind;
    private final String name;
    private final String secret;
    private final OAuth2Settings oauth2;

    private WebhookAuth(Kind kind, String name, String secret, OAuth2Settings oauth2) {
        this.kind = kind;
        this.name = name;
        this.secret = secret;
        this.oauth2 = oauth2;
    }

    /** No credentials (the default). */
    public static WebhookAuth none() {
        return new WebhookAuth(Kind.NONE, null, null, null);
    }

    /** {@code Authorization: Bearer <token>}. */
    public static WebhookAuth bearer(String token) {
        return new WebhookAuth(Kind.BEARER, null, token, null);
    }

    /** {@code Authorization: Basic base64(user:password)}, UTF-8. */
    public static WebhookAuth basic(String user, String password) {
        return new WebhookAuth(Kind.BASIC, user, password, null);
    }

    /** The key as the value of {@code header}, for example {@code X-Api-Key}. */
    public static WebhookAuth apiKey(String header, String key) {
        return new WebhookAuth(Kind.API_KEY, header, key, null);
    }

    /**
     * A bearer token from {@code tokenUrl} with the client-credentials grant; the client secret goes as HTTP basic
     * unless {@link #secretInBody()}. The token is cached, replaced {@link #refreshBefore} its expiry, and replaced
     * once when the receiver answers 401.
     */
    public static WebhookAuth oauth2ClientCredentials(URI tokenUrl, String clientId, String clientSecret) {
        return new WebhookAuth(Kind.OAUTH2, null, null, new OAuth2Settings(tokenUrl, clientId, clientSecret, null,
                null, false, DEFAULT_REFRESH_BEFORE));
    }

    /** OAuth2 only: the {@code scope} to ask for. */
    public WebhookAuth scope(String scope) {
        OAuth2Settings o = oauth2();
        return withOAuth2(new OAuth2Settings(o.tokenUrl(), o.clientId(), o.clientSecret(), scope, o.audience(),
                o.secretInBody(), o.refreshBefore()));
    }

    /** OAuth2 only: the {@code audience} to ask for (a parameter several identity providers require). */
    public WebhookAuth audience(String audience) {
        OAuth2Settings o = oauth2();
        return withOAuth2(new OAuth2Settings(o.tokenUrl(), o.clientId(), o.clientSecret(), o.scope(), audience,
                o.secretInBody(), o.refreshBefore()));
    }

    /** OAuth2 only: send {@code client_id} and {@code client_secret} in the form body instead of as HTTP basic. */
    public WebhookAuth secretInBody() {
        OAuth2Settings o = oauth2();
        return withOAuth2(new OAuth2Settings(o.tokenUrl(), o.clientId(), o.clientSecret(), o.scope(), o.audience(),
                true, o.refreshBefore()));
    }

    /** OAuth2 only: how long before expiry a cached token is replaced (default 30 s; half a shorter lifetime). */
    public WebhookAuth refreshBefore(Duration margin) {
        OAuth2Settings o = oauth2();
        return withOAuth2(new OAuth2Settings(o.tokenUrl(), o.clientId(), o.clientSecret(), o.scope(), o.audience(),
                o.secretInBody(), margin));
    }

    private OAuth2Settings oauth2() {
        if (kind != Kind.OAUTH2) {
            // A programming error in the caller's wiring, reported at once: there is nothing to validate later.
            throw new IllegalStateException("scope, audience, secretInBody and refreshBefore apply to"
                    + " WebhookAuth.oauth2ClientCredentials only, not to " + this);
        }
        return oauth2;
    }

    private WebhookAuth withOAuth2(OAuth2Settings settings) {
        return new WebhookAuth(Kind.OAUTH2, null, null, settings);
    }

    /** The header this authentication sets, to keep custom headers from colliding with it; null for none. */
    String headerName() {
        switch (kind) {
            case NONE:
                return null;
            case API_KEY:
                return name;
            default:
                return "Authorization";
        }
    }

    void check(Checks checks) {
        switch (kind) {
            case BEARER:
                checks.that(usable(secret), "auth bearer token must not be blank");
                break;
            case BASIC:
                checks.that(usable(name), "auth basic user must not be blank");
                checks.that(name == null || name.indexOf(':') < 0, "auth basic user must not contain ':'");
                checks.that(secret != null, "auth basic password must not be null");
                break;
            case API_KEY:
                checks.that(name != null && HeaderRules.isToken(name),
                        "auth apiKey header must be a valid HTTP header name, got " + quoted(name));
                checks.that(name == null || !HeaderRules.isReserved(name), "auth apiKey header "
                        + quoted(name) + " is set by the webhook itself; choose another name");
                checks.that(usable(secret), "auth apiKey value must not be blank");
                break;
            case OAUTH2:
                String urlProblem = Endpoints.problem(oauth2.tokenUrl());
                checks.that(urlProblem == null, "auth oauth2 tokenUrl " + urlProblem);
                checks.that(usable(oauth2.clientId()), "auth oauth2 clientId must not be blank");
                checks.that(usable(oauth2.clientSecret()), "auth oauth2 clientSecret must not be blank");
                checks.that(oauth2.scope() == null || !oauth2.scope().isBlank(), "auth oauth2 scope must not be"
                        + " blank when given");
                checks.that(oauth2.audience() == null || !oauth2.audience().isBlank(), "auth oauth2 audience"
                        + " must not be blank when given");
                checks.notNegative("auth oauth2 refreshBefore", oauth2.refreshBefore());
                break;
            default:
                break;
        }
        // A line break in a header value would let it forge headers; the value itself is never echoed.
        checks.that(secret == null || secret.indexOf('\r') < 0 && secret.indexOf('\n') < 0,
                "auth credential must not contain a line break");
    }

    Authorizer authorizer(HttpClient client, Duration timeout, Clock clock) {
        switch (kind) {
            case BEARER:
                return new HeaderAuthorizer("Authorization", "Bearer " + secret, List.of(secret));
            case BASIC:
                String encoded = Base64.getEncoder().encodeToString(
                        (name + ":" + secret).getBytes(StandardCharsets.UTF_8));
                return new HeaderAuthorizer("Authorization", "Basic " + encoded, List.of(secret, encoded));
            case API_KEY:
                return new HeaderAuthorizer(name, secret, List.of(secret));
            case OAUTH2:
                return new OAuth2Authorizer(oauth2, client, timeout, clock);
            default:
                return Authorizer.NONE;
        }
    }

    private static boolean usable(String s) {
        return s != null && !s.isBlank();
    }

    private static String quoted(String s) {
        return s == null ? "null" : "'" + s + "'";
    }

    @Override
    public String toString() {
        switch (kind) {
            case BEARER:
                return "bearer token (hidden)";
            case BASIC:
                return "HTTP basic (user '" + name + "', password hidden)";
            case API_KEY:
                return "API key in header " + name + " (hidden)";
            case OAUTH2:
                return oauth2.toString();
            default:
                return "none";
        }
    }
}
