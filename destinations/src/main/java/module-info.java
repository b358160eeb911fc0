/**
 * Ready destinations behind core's {@code Destination} SPI, on the JDK alone: an HTTP webhook
 * ({@code io.tidemark.destinations.webhook}), JSON-lines files ({@code io.tidemark.destinations.files}) and a JDBC
 * table ({@code io.tidemark.destinations.jdbc}). Their {@code internal} packages are not exported.
 */
module io.tidemark.destinations {
    requires transitive io.tidemark.core;
    requires java.net.http;
    requires org.slf4j;

    exports io.tidemark.destinations.webhook;
    exports io.tidemark.destinations.files;
    exports io.tidemark.destinations.jdbc;
}
