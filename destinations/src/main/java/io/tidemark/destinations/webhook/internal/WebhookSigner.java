package io.tidemark.destinations.webhook.internal;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Signs a request the Standard Webhooks 1.0 way: for each secret, {@code v1,} and the base64 HMAC-SHA256 of
 * {@code <webhook-id>.<webhook-timestamp>.<payload>}; several signatures (a secret being rotated) are separated by
 * spaces. The payload is the JSON body before any {@code Content-Encoding}: what the receiver reads once its HTTP
 * stack has undone the gzip.
 *
 * <p>Holds the decoded keys only; {@link #toString()} says how many there are, never what they are.
 */
public final class WebhookSigner {

    /** The spec's prefix of a symmetric signing secret, followed by the key in base64. */
    public static final String SECRET_PREFIX = "whsec_";
    /** The spec's bounds on a symmetric key: at least 24 bytes (192 bits), at most 64 (512 bits). */
    public static final int MIN_KEY_BYTES = 24;
    public static final int MAX_KEY_BYTES = 64;

    private static final byte DOT = '.';
    private final List<SecretKeySpec> keys;

    private WebhookSigner(List<SecretKeySpec> keys) {
        this.keys = keys;
    }

    /** A signer for secrets already checked by {@link #problem}. */
    public static WebhookSigner of(List<String> secrets) {
        List<SecretKeySpec> keys = new ArrayList<>(secrets.size());
        for (String secret : secrets) {
            keys.add(new SecretKeySpec(decode(secret), "HmacSHA256"));
        }
        return new WebhookSigner(List.copyOf(keys));
    }

    /**
     * What is wrong with a configured secret, worded without the secret itself; null when it is usable.
     */
    public static String problem(String secret) {
        if (secret == null) {
            return "is null";
        }
        if (!secret.startsWith(SECRET_PREFIX)) {
            return "must have the Standard Webhooks form whsec_<base64 key>";
        }
        byte[] key;
        try {
            key = decode(secret);
        } catch (IllegalArgumentException e) {
            return "is not valid base64 after whsec_";
        }
        if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
            return "must hold a key of " + MIN_KEY_BYTES + " to " + MAX_KEY_BYTES + " bytes, has " + key.length;
        }
        return null;
    }

    /** The {@code webhook-signature} header value for a request. */
    public String signature(String id, long timestamp, byte[] payload) {
        byte[] idBytes = id.getBytes(StandardCharsets.US_ASCII);
        byte[] timestampBytes = Long.toString(timestamp).getBytes(StandardCharsets.US_ASCII);
        StringBuilder header = new StringBuilder(48 * keys.size());
        try {
            for (SecretKeySpec key : keys) {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(key);
                mac.update(idBytes);
                mac.update(DOT);
                mac.update(timestampBytes);
                mac.update(DOT);
                mac.update(payload);
                if (header.length() > 0) {
                    header.append(' ');
                }
                header.append("v1,").append(Base64.getEncoder().encodeToString(mac.doFinal()));
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java platform provides HmacSHA256", e);
        }
        return header.toString();
    }

    private static byte[] decode(String secret) {
        return Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length()));
    }

    @Override
    public String toString() {
        return "Standard Webhooks v1 signer (" + keys.size() + (keys.size() == 1 ? " secret)" : " secrets)");
    }
}
