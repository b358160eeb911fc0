package io.tidemark.destinations.webhook.internal;

import java.net.http.HttpRequest;
import java.util.List;

/** A fixed credential header: bearer token, HTTP basic or an API key. A 401 cannot be cured by sending it again. */
public final class HeaderAuthorizer implements Authorizer {

    private final String header;
    private final String value;
    private final List<String> secrets;

    /** {@code secrets} are the values to scrub from messages: the header value and what it was made from. */
    public HeaderAuthorizer(String header, String value, List<String> secrets) {
        this.header = header;
        this.value = value;
        this.secrets = List.copyOf(secrets);
    }

    @Override
    public void authorize(HttpRequest.Builder request) {
        request.setHeader(header, value);
    }

    @Override
    public boolean renewAfterRejection(HttpRequest refused) {
        return false;
    }

    @Override
    public List<String> secrets() {
        return secrets;
    }

    @Override
    public String toString() {
        return "header " + header + " (value hidden)";
    }
}
