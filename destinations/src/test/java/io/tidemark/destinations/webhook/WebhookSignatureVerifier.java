package io.tidemark.destinations.webhook;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * A receiver's check of a Standard Webhooks signature, written from the specification's text and sharing no code
 * with the webhook: drop {@code whsec_} from the secret and base64-decode the rest into the HMAC key; sign
 * {@code <webhook-id>.<webhook-timestamp>.<body>} with HMAC-SHA256; the header is a space-separated list of
 * {@code v1,<base64>} entries, and one matching entry (compared in constant time) is enough.
 */
final class WebhookSignatureVerifier {

    private WebhookSignatureVerifier() {
    }

    static boolean verify(String secret, String id, String timestamp, byte[] body, String signatureHeader) {
        if (signatureHeader == null) {
            return false;
        }
        byte[] expected = sign(secret, id, timestamp, body);
        for (String entry : signatureHeader.split(" ")) {
            int comma = entry.indexOf(',');
            if (comma < 0 || !entry.substring(0, comma).equals("v1")) {
                continue;
            }
            byte[] given;
            try {
                given = Base64.getDecoder().decode(entry.substring(comma + 1));
            } catch (IllegalArgumentException e) {
                continue;
            }
            if (MessageDigest.isEqual(expected, given)) {
                return true;
            }
        }
        return false;
    }

    static byte[] sign(String secret, String id, String timestamp, byte[] body) {
        try {
            byte[] key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
            byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
            byte[] content = new byte[prefix.length + body.length];
            System.arraycopy(prefix, 0, content, 0, prefix.length);
            System.arraycopy(body, 0, content, prefix.length, body.length);
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
