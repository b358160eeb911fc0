package io.tidemark.benchmarks.capture;

import io.tidemark.postgres.PostgresLogicalCapture;
import io.tidemark.postgres.PostgresLogicalProvider;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.spi.Destination;
import io.tidemark.testing.PooledDataSource;

import java.util.function.UnaryOperator;

/**
 * The log-based capture's reader as an application runs it: a {@link SyncEngine} with {@link PostgresLogicalProvider}
 * streaming the capture's slot and storing its watermark in the same database, every connection (the replication
 * stream and the store's pool) under one {@code application_name}, so that {@link BackendCpu} finds them.
 */
final class LogicalReader {

    private LogicalReader() {
    }

    /** Seeds the object (from here on, only changes) and starts the engine; closing the result stops everything. */
    static AutoCloseable start(BenchServer server, String applicationName, PostgresLogicalCapture capture,
                               String objectName, String table, Destination destination) {
        return start(server, applicationName, capture, objectName, table, destination, UnaryOperator.identity());
    }

    /** As above, with the provider's settings changed by {@code settings}. */
    static AutoCloseable start(BenchServer server, String applicationName, PostgresLogicalCapture capture,
                               String objectName, String table, Destination destination,
                               UnaryOperator<PostgresLogicalProvider.Builder> settings) {
        PooledDataSource pool = PooledDataSource.of(server.dataSource(applicationName), 2);
        JdbcWatermarkStore store = JdbcWatermarkStore.create(pool);
        PostgresLogicalProvider provider = settings.apply(PostgresLogicalProvider.builder(capture)
                .connect(server.jdbcUrl(), CaptureBench.connectionProperties(applicationName))
                .watermarks(store)).build();
        SyncEngine engine = SyncEngine.builder().name("logical-" + objectName).provider(provider).watermarks(store)
                .track(capture.track(objectName, table)).destination("out", destination).build();
        engine.runOnce();
        engine.start();
        return () -> {
            try {
                engine.close();
            } finally {
                provider.close();
                pool.close();
            }
        };
    }
}
