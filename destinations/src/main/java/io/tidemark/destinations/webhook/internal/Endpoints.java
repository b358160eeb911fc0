package io.tidemark.destinations.webhook.internal;

import java.net.URI;

/** How a URL is shown in messages and {@code toString()}: never its user info or query, which may hold a secret. */
public final class Endpoints {

    private Endpoints() {
    }

    public static String describe(URI uri) {
        if (uri == null) {
            return "null";
        }
        StringBuilder s = new StringBuilder();
        s.append(uri.getScheme()).append("://").append(uri.getHost());
        if (uri.getPort() >= 0) {
            s.append(':').append(uri.getPort());
        }
        if (uri.getRawPath() != null) {
            s.append(uri.getRawPath());
        }
        if (uri.getRawQuery() != null) {
            s.append("?…");
        }
        return s.toString();
    }

    /** What is wrong with a webhook or token endpoint URL; null when it is usable. */
    public static String problem(URI uri) {
        if (uri == null) {
            return "is null";
        }
        if (!uri.isAbsolute() || !("http".equalsIgnoreCase(uri.getScheme())
                || "https".equalsIgnoreCase(uri.getScheme()))) {
            return "must be an absolute http or https URL, got " + describe(uri);
        }
        if (uri.getHost() == null) {
            return "has no host: " + describe(uri);
        }
        if (uri.getRawUserInfo() != null) {
            return "must not carry user info (user:password@); configure WebhookAuth.basic instead";
        }
        if (uri.getRawFragment() != null) {
            return "must not have a fragment (#...): " + describe(uri);
        }
        return null;
    }
}
