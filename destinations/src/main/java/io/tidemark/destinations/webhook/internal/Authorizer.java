package io.tidemark.destinations.webhook.internal;

import java.net.http.HttpRequest;
import java.util.List;

/** Puts a request's credentials on it, and renews them once when the receiver answers 401. */
public interface Authorizer {

    /** No credentials: the receiver trusts the network or checks the signature only. */
    Authorizer NONE = new Authorizer() {
        @Override
        public void authorize(HttpRequest.Builder request) {
        }

        @Override
        public boolean renewAfterRejection(HttpRequest refused) {
            return false;
        }

        @Override
        public List<String> secrets() {
            return List.of();
        }
    };

    /** Adds the credential header; may fetch a token first (a failure is a {@code DeliveryException}). */
    void authorize(HttpRequest.Builder request) throws InterruptedException;

    /**
     * Called after the receiver answered {@code refused} with 401: true when a fresh credential will be added next
     * time, so the request is worth sending once more; false when the credential is fixed and the 401 is final.
     */
    boolean renewAfterRejection(HttpRequest refused);

    /** Every secret value this authorizer may put on the wire right now, for scrubbing them from messages. */
    List<String> secrets();
}
