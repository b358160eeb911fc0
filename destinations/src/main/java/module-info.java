/**
 * Ready destinations behind core's {@code Destination} SPI, on the JDK alone: an HTTP webhook
 * ({@code io.tidemark.destinations.webhook}), JSON-lines files ({@code io.tidemark.destinations.files}) and a JDBC
 * table ({@code io.tidemark.destinations.jdbc}). Their {@code internal} packages are not exported.
 */
module io.tidemark.destinations {
    requires transitive io.tidemark.core;
    // WebhookDestination.Builder.httpVersion takes an HttpClient.Version: part of the API.
    requires transitive java.net.http;
    requires org.slf4j;

    exports io.tidemark.destinations.webhook;
    exports io.tidemark.destinations.files;
    exports io.tidemark.destinations.jdbc;
}
