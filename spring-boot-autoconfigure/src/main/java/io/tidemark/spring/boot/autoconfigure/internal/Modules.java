package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.spring.boot.autoconfigure.TidemarkProperties;
import io.tidemark.sync.spi.ChangeProvider;

import javax.sql.DataSource;

/**
 * Tidemark's optional modules by the class that marks each, and the function provider chosen by
 * {@code tidemark.provider}.
 * The providers are created in small nested classes so that a missing module is never loaded by accident.
 */
final class Modules {

    static final String POSTGRES_PROVIDER = "io.tidemark.postgres.PostgresProvider";
    static final String POSTGRES_LOGICAL_PROVIDER = "io.tidemark.postgres.PostgresLogicalProvider";
    static final String SQLSERVER_PROVIDER = "io.tidemark.sqlserver.SqlServerProvider";
    static final String DESTINATIONS = "io.tidemark.destinations.webhook.WebhookDestination";

    private Modules() {
    }

    /** A provider of change functions or procedures; the log-based one is {@link LogicalCapture}'s. */
    static ChangeProvider provider(TidemarkProperties.Provider provider, DataSource dataSource) {
        return switch (provider) {
            case POSTGRES -> Postgres.create(dataSource);
            case SQLSERVER -> SqlServer.create(dataSource);
            case POSTGRES_LOGICAL -> throw new IllegalArgumentException("the log-based provider needs the engine's"
                    + " store and a replication connection: LogicalCapture.provider");
        };
    }

    private static final class Postgres {
        static ChangeProvider create(DataSource dataSource) {
            return io.tidemark.postgres.PostgresProvider.create(dataSource);
        }
    }

    private static final class SqlServer {
        static ChangeProvider create(DataSource dataSource) {
            return io.tidemark.sqlserver.SqlServerProvider.create(dataSource);
        }
    }
}
