package io.tidemark.destinations.webhook.internal;

/**
 * What an HTTP status means for a delivery: 2xx accepted; 408, 425, 429 and 5xx worth trying again; anything else
 * (3xx, which is not followed, and the other 4xx) a refusal that sending the same request again cannot change.
 */
public final class Statuses {

    private Statuses() {
    }

    public static boolean accepted(int status) {
        return status >= 200 && status <= 299;
    }

    public static boolean retryable(int status) {
        return status == 408 || status == 425 || status == 429 || (status >= 500 && status <= 599);
    }
}
