/**
 * Tidemark's engine: the public API ({@code io.tidemark.sync}), the provider SPI ({@code io.tidemark.sync.spi}) and
 * the optional Micrometer listener ({@code io.tidemark.sync.micrometer}).
 *
 * <p>The {@code internal} packages are shared with Tidemark's own modules only, each exported to exactly the modules
 * that use it; an application cannot compile against them on the module path.
 */
module io.tidemark.core {
    // DataSource and JDBC types, and Jackson's JsonNode/ObjectNode/JsonParser, appear in the API and the SPI.
    requires transitive java.sql;
    requires transitive com.fasterxml.jackson.core;
    requires transitive com.fasterxml.jackson.databind;
    requires org.jdbi.v3.core;
    requires org.slf4j;
    // Optional: only MicrometerSyncListener uses it; an application that wants metrics brings its own Micrometer.
    // Not "static transitive": javac then demands Micrometer when compiling every module that requires this one.
    requires static micrometer.core;

    exports io.tidemark.sync;
    exports io.tidemark.sync.spi;
    exports io.tidemark.sync.micrometer;

    exports io.tidemark.sync.internal
            to io.tidemark.postgres, io.tidemark.history, io.tidemark.destinations, io.tidemark.kafka;
    exports io.tidemark.sync.internal.config
            to io.tidemark.postgres, io.tidemark.sqlserver, io.tidemark.history, io.tidemark.testing,
            io.tidemark.destinations, io.tidemark.kafka, io.tidemark.kafka.connect;
    exports io.tidemark.sync.internal.contract to io.tidemark.testing, io.tidemark.kafka.connect;
    exports io.tidemark.sync.internal.engine to io.tidemark.kafka.connect;
    exports io.tidemark.sync.internal.jdbc
            to io.tidemark.postgres, io.tidemark.sqlserver, io.tidemark.history, io.tidemark.destinations;
    exports io.tidemark.sync.internal.sql
            to io.tidemark.postgres, io.tidemark.sqlserver, io.tidemark.history, io.tidemark.testing,
            io.tidemark.destinations;
}
