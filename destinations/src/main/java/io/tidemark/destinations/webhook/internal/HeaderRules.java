package io.tidemark.destinations.webhook.internal;

import java.util.Locale;
import java.util.Set;

/** Which header names a user may set on webhook requests. */
public final class HeaderRules {

    /**
     * Headers the webhook sets itself (the body's type and encoding, the Standard Webhooks headers) or that the JDK
     * client manages and refuses from callers.
     */
    private static final Set<String> RESERVED = Set.of("content-type", "content-encoding", "content-length",
            "webhook-id", "webhook-timestamp", "webhook-signature", "connection", "expect", "host", "upgrade",
            "transfer-encoding", "te", "trailer", "keep-alive");

    private HeaderRules() {
    }

    /** An RFC 9110 token: what a header name must be. */
    public static boolean isToken(String name) {
        if (name == null || name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    public static boolean isReserved(String name) {
        return RESERVED.contains(name.toLowerCase(Locale.ROOT));
    }

    /** A header value must not break the request into lines. */
    public static boolean isValue(String value) {
        return value != null && value.indexOf('\r') < 0 && value.indexOf('\n') < 0;
    }
}
