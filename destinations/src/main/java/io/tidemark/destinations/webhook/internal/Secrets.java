package io.tidemark.destinations.webhook.internal;

import java.util.List;
import java.util.function.Supplier;

/**
 * Scrubs secrets out of text that came from elsewhere (a receiver's error body) before it goes into a message or a
 * log line; Tidemark's own messages are written without secrets in the first place.
 */
public final class Secrets {

    private static final int SNIPPET = 200;
    private final Supplier<List<String>> secrets;

    public Secrets(Supplier<List<String>> secrets) {
        this.secrets = secrets;
    }

    /** At most 200 characters of {@code text}, on one line, with every current secret replaced by {@code ***}. */
    public String snippet(String text) {
        if (text == null || text.isBlank()) {
            return "";
        }
        String s = text;
        for (String secret : secrets.get()) {
            if (secret != null && secret.length() >= 4) {
                s = s.replace(secret, "***");
            }
        }
        s = s.replaceAll("[\\r\\n\\t]+", " ").strip();
        return s.length() <= SNIPPET ? s : s.substring(0, SNIPPET) + "…";
    }
}
