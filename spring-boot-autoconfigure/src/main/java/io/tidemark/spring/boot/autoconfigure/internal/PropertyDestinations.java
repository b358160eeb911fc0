package io.tidemark.spring.boot.autoconfigure.internal;

import io.tidemark.destinations.files.JsonLinesFileDestination;
import io.tidemark.destinations.jdbc.JdbcTableDestination;
import io.tidemark.destinations.webhook.WebhookAuth;
import io.tidemark.destinations.webhook.WebhookDestination;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.DestinationProperties;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.JdbcTable;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.JsonLines;
import io.tidemark.spring.boot.autoconfigure.TidemarkProperties.Webhook;
import io.tidemark.sync.spi.Destination;

import javax.sql.DataSource;
import java.util.function.Function;

/**
 * The ready destinations of tidemark-destinations made from properties alone. Loaded only when that module is on
 * the class path. The destinations' own builders check the values further (a URL's scheme, a secret's format) and
 * fail start-up with a message naming the destination.
 */
final class PropertyDestinations {

    private PropertyDestinations() {
    }

    static void check(Violations v, String prefix, DestinationProperties destination,
                      Function<String, DataSource> dataSourceBeans) {
        switch (destination.getType()) {
            case WEBHOOK -> {
                Webhook hook = destination.getWebhook();
                v.require(hook.getUrl() != null && !hook.getUrl().isBlank(), prefix + ".webhook.url",
                        "required for type webhook: where to POST each page (http or https)");
                v.require((hook.getBasicUser() == null) == (hook.getBasicPassword() == null),
                        prefix + ".webhook.basic-user", "basic-user and basic-password go together");
                v.require(hook.getBearerToken() == null || hook.getBasicUser() == null,
                        prefix + ".webhook.bearer-token", "choose one authentication: bearer-token or basic-user");
            }
            case JSON_LINES -> v.require(destination.getJsonLines().getFolder() != null,
                    prefix + ".json-lines.folder", "required for type json-lines: the folder the files go to");
            case JDBC_TABLE -> {
                JdbcTable table = destination.getJdbcTable();
                v.require(table.getTable() != null && !table.getTable().isBlank(), prefix + ".jdbc-table.table",
                        "required for type jdbc-table: the target table");
                v.require(!table.getColumns().isEmpty(), prefix + ".jdbc-table.columns",
                        "required for type jdbc-table: the target table's columns");
                v.require(!table.getKeyColumns().isEmpty(), prefix + ".jdbc-table.key-columns",
                        "required for type jdbc-table: the columns that identify a row");
                v.require(table.getDataSource() == null || dataSourceBeans.apply(table.getDataSource()) != null,
                        prefix + ".jdbc-table.data-source", "there is no DataSource bean named '"
                                + table.getDataSource() + "'");
            }
            case BEAN -> throw new IllegalArgumentException("a bean destination is not made from properties");
        }
    }

    static Destination create(String name, DestinationProperties destination, DataSource dataSource,
                              Function<String, DataSource> dataSourceBeans) {
        return switch (destination.getType()) {
            case WEBHOOK -> webhook(destination.getWebhook());
            case JSON_LINES -> jsonLines(destination.getJsonLines());
            case JDBC_TABLE -> jdbcTable(name, destination.getJdbcTable(),
                    destination.getJdbcTable().getDataSource() == null
                            ? dataSource : dataSourceBeans.apply(destination.getJdbcTable().getDataSource()));
            case BEAN -> throw new IllegalArgumentException("a bean destination is not made from properties");
        };
    }

    private static Destination webhook(Webhook hook) {
        WebhookDestination.Builder builder = WebhookDestination.builder().url(hook.getUrl())
                .connectTimeout(hook.getConnectTimeout()).requestTimeout(hook.getRequestTimeout()).gzip(hook.isGzip());
        hook.getHeaders().forEach(builder::header);
        if (hook.getSigningSecret() != null) {
            builder.signingSecret(hook.getSigningSecret());
        }
        if (hook.getMaxRequestBytes() != null) {
            builder.maxRequestBytes(hook.getMaxRequestBytes());
        }
        if (hook.getBearerToken() != null) {
            builder.auth(WebhookAuth.bearer(hook.getBearerToken()));
        } else if (hook.getBasicUser() != null) {
            builder.auth(WebhookAuth.basic(hook.getBasicUser(), hook.getBasicPassword()));
        }
        return builder.build();
    }

    private static Destination jsonLines(JsonLines files) {
        JsonLinesFileDestination.Builder builder = JsonLinesFileDestination.builder(files.getFolder())
                .prefix(files.getPrefix()).gzip(files.isGzip()).fsync(files.isFsync());
        if (files.getRotateAfterLines() != null) {
            builder.rotateAfterLines(files.getRotateAfterLines());
        }
        if (files.getRotateAfterBytes() != null) {
            builder.rotateAfterBytes(files.getRotateAfterBytes());
        }
        if (files.getRetainFor() != null) {
            builder.retainFor(files.getRetainFor());
        }
        if (files.getRetainFiles() != null) {
            builder.retainFiles(files.getRetainFiles());
        }
        return builder.build();
    }

    private static Destination jdbcTable(String name, JdbcTable table, DataSource target) {
        JdbcTableDestination.Builder builder = table.getDialect() == JdbcTable.Dialect.SQLSERVER
                ? JdbcTableDestination.sqlServer(target, table.getTable())
                : JdbcTableDestination.postgres(target, table.getTable());
        return builder.name(name).columns(table.getColumns().toArray(String[]::new))
                .keyColumns(table.getKeyColumns().toArray(String[]::new)).createTables(table.isCreateTables())
                .batchSize(table.getBatchSize()).build();
    }
}
