package io.tidemark.destinations.webhook.internal;

import java.net.URI;
import java.time.Duration;

/**
 * An OAuth2 client-credentials grant (RFC 6749, 4.4) as configured: where to ask, who asks, how the client secret
 * travels (HTTP basic, or {@code client_id}/{@code client_secret} in the form body), the optional scope and
 * audience, and how long before its expiry a token is replaced.
 */
public record OAuth2Settings(URI tokenUrl, String clientId, String clientSecret, String scope, String audience,
                             boolean secretInBody, Duration refreshBefore) {

    @Override
    public String toString() {
        return "OAuth2 client credentials (client '" + clientId + "', token endpoint " + Endpoints.describe(tokenUrl)
                + ", secret sent " + (secretInBody ? "in the body" : "as HTTP basic")
                + (scope == null ? "" : ", scope '" + scope + "'")
                + (audience == null ? "" : ", audience '" + audience + "'") + ")";
    }
}
