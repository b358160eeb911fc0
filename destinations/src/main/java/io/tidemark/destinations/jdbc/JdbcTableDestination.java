package io.tidemark.destinations.jdbc;

import io.tidemark.destinations.jdbc.internal.ApplyErrors;
import io.tidemark.destinations.jdbc.internal.Column;
import io.tidemark.destinations.jdbc.internal.DeliveryProblem;
import io.tidemark.destinations.jdbc.internal.PageApplier;
import io.tidemark.destinations.jdbc.internal.PostgresTableDialect;
import io.tidemark.destinations.jdbc.internal.SqlServerTableDialect;
import io.tidemark.destinations.jdbc.internal.TableDialect;
import io.tidemark.destinations.jdbc.internal.TableMapping;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.config.Defaults;
import io.tidemark.sync.internal.jdbc.JdbcTarget;
import io.tidemark.sync.internal.jdbc.SqlErrors;
import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.sync.spi.Destination;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Applies each page to a table in another database (destinations/README-jdbc.md): inserts and updates as upserts
 * by key, deletes as deletes, a FULL export as the table's new content; one transaction per page, in which the
 * destination also records the page as its position, so that a page is applied exactly once:
 *
 * <pre>{@code
 * Destination copy = JdbcTableDestination.postgres(reportingDataSource, "reporting.items")
 *         .name("reporting-items")
 *         .columns("id", "name", "price")
 *         .keyColumns("id")
 *         .build();
 * }</pre>
 *
 * <p>The position table and the stage table of FULL exports are created on first use unless
 * {@link Builder#createTables(boolean)} is off; {@link #script()} is their DDL for a DBA.
 */
public final class JdbcTableDestination implements Destination {

    private static final Logger LOG = LoggerFactory.getLogger(JdbcTableDestination.class);

    /** The position table's name unless one is set; it lives in the target table's schema unless told otherwise. */
    public static final String DEFAULT_POSITION_TABLE = "tidemark_destination_position";
    /** The stage table's name unless one is set. */
    public static final String DEFAULT_STAGE_TABLE = "tidemark_destination_stage";
    /** Rows per JDBC batch unless told otherwise. */
    public static final int DEFAULT_BATCH_SIZE = 1000;

    private final String name;
    private final TableDialect dialect;
    private final TableMapping mapping;
    private final String target;
    private final PageApplier applier;

    private JdbcTableDestination(Builder b, TableMapping mapping) {
        this.name = b.name == null ? mapping.table().toString() : b.name;
        this.dialect = b.dialect;
        this.mapping = mapping;
        this.target = JdbcTarget.describe(b.dataSource);
        this.applier = new PageApplier(b.dataSource, b.dialect, mapping, name, b.batchSize,
                (int) b.commandTimeout.getSeconds(), b.createTables);
    }

    /** A destination writing to a PostgreSQL table ({@code schema.table}, unquoted parts fold to lower case). */
    public static Builder postgres(DataSource dataSource, String table) {
        return new Builder(new PostgresTableDialect(), dataSource, table);
    }

    /** A destination writing to a SQL Server table ({@code schema.table}, {@code [bracketed]} parts as written). */
    public static Builder sqlServer(DataSource dataSource, String table) {
        return new Builder(new SqlServerTableDialect(), dataSource, table);
    }

    @Override
    public void deliver(ChangeBatch batch) {
        try {
            PageApplier.Outcome outcome = applier.apply(batch);
            LOG.debug("{}: page {}/{} of {} {}", this, batch.pageNumber(), batch.pageCount(), batch.batchId(),
                    outcome);
        } catch (SQLException e) {
            String message = failure(batch) + SqlErrors.detail(e);
            throw ApplyErrors.isRetryable(e) ? DeliveryException.retryable(message, e)
                    : DeliveryException.fatal(message, e);
        } catch (DeliveryProblem e) {
            throw DeliveryException.fatal(failure(batch) + e.getMessage(), null);
        }
    }

    /** The DDL of the position and stage tables, for a DBA to review or run ahead of the first delivery. */
    public String script() {
        return dialect.createScript(mapping);
    }

    /** The destination's name: the key of its rows in the position table. */
    public String name() {
        return name;
    }

    private String failure(ChangeBatch batch) {
        return this + ": could not apply page " + batch.pageNumber() + "/" + batch.pageCount() + " of "
                + batch.batchId() + " (" + batch.idempotencyKey() + ") to " + mapping.table() + " on " + target + ": ";
    }

    @Override
    public String toString() {
        return "JdbcTableDestination[" + name + " -> " + dialect.database() + " " + mapping.table() + "]";
    }

    /** Configuration; setters store, {@link #build()} checks everything at once. */
    public static final class Builder {
        private final TableDialect dialect;
        private final DataSource dataSource;
        private final String table;
        private final Map<String, String> fieldByColumn = new LinkedHashMap<>();
        private final List<String> duplicateColumns = new ArrayList<>();
        private List<String> keyColumns = List.of();
        private String name;
        private String stateSchema;
        private String positionTable = DEFAULT_POSITION_TABLE;
        private String stageTable = DEFAULT_STAGE_TABLE;
        private boolean createTables = true;
        private int batchSize = DEFAULT_BATCH_SIZE;
        private Duration commandTimeout = Defaults.COMMAND_TIMEOUT;

        private Builder(TableDialect dialect, DataSource dataSource, String table) {
            this.dialect = dialect;
            this.dataSource = dataSource;
            this.table = table;
        }

        /**
         * The destination's name, its key in the position table: two destinations writing to one database need
         * different names. Default: the table's qualified name.
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Columns fed from the change field of the same name (names as the catalog spells them). */
        public Builder columns(String... columns) {
            for (String column : columns) {
                column(column, column);
            }
            return this;
        }

        /** A column fed from the change field {@code field}. */
        public Builder column(String column, String field) {
            if (fieldByColumn.containsKey(column)) {
                duplicateColumns.add(column);
            }
            fieldByColumn.put(column, field);
            return this;
        }

        /** The columns rows are matched on (the table's primary key or a unique key); mapped columns. */
        public Builder keyColumns(String... keyColumns) {
            this.keyColumns = keyColumns == null ? null : java.util.Arrays.asList(keyColumns);
            return this;
        }

        /** The schema of the position and stage tables. Default: the target table's schema. */
        public Builder stateSchema(String schema) {
            this.stateSchema = schema;
            return this;
        }

        /** The position table's name. Default {@value #DEFAULT_POSITION_TABLE}. */
        public Builder positionTable(String positionTable) {
            this.positionTable = positionTable;
            return this;
        }

        /** The stage table's name. Default {@value #DEFAULT_STAGE_TABLE}. */
        public Builder stageTable(String stageTable) {
            this.stageTable = stageTable;
            return this;
        }

        /** Creates the position and stage tables on first use when missing. Default on; off when a DBA runs {@link #script()}. */
        public Builder createTables(boolean createTables) {
            this.createTables = createTables;
            return this;
        }

        /** Rows per JDBC batch. Default {@value #DEFAULT_BATCH_SIZE}. */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /** How long one statement may run before it is cancelled (and the page retried). */
        public Builder commandTimeout(Duration commandTimeout) {
            this.commandTimeout = commandTimeout;
            return this;
        }

        public JdbcTableDestination build() {
            Checks checks = Checks.of("JdbcTableDestination");
            checks.notNull("dataSource", dataSource);
            QualifiedName target = checks.valid(() -> dialect.table(table, "target table"));
            if (name != null) {
                checks.notBlank("name", name);
                checks.that(name.length() <= 200, "name must be at most 200 characters, got " + name.length());
            }
            checks.that(!fieldByColumn.isEmpty(), "columns must name at least one column");
            duplicateColumns.forEach(c -> checks.add("column \"" + c + "\" is mapped twice"));
            Map<String, String> quoted = new LinkedHashMap<>();
            fieldByColumn.forEach((column, field) -> {
                String q = checks.valid(() -> dialect.quoteColumn(column));
                if (q != null) {
                    quoted.put(column, q);
                }
                if (field == null || field.isEmpty()) {
                    checks.add("the field of column \"" + column + "\" must not be empty");
                }
            });
            if (checks.noNulls("keyColumns", keyColumns)) {
                checks.that(!keyColumns.isEmpty(), "keyColumns must name at least one column (the key rows are"
                        + " matched on)");
                Set<String> seen = new HashSet<>();
                for (String key : keyColumns) {
                    checks.that(fieldByColumn.containsKey(key), "key column \"" + key + "\" is not one of the"
                            + " columns " + fieldByColumn.keySet());
                    checks.that(seen.add(key), "key column \"" + key + "\" is listed twice");
                }
            }
            String schema = stateSchema != null ? stateSchema
                    : target == null ? dialect.defaultSchema() : target.schema().orElse(dialect.defaultSchema());
            QualifiedName positions = checks.notNull("positionTable", positionTable)
                    ? checks.valid(() -> dialect.inSchema(schema, positionTable)) : null;
            QualifiedName stage = checks.notNull("stageTable", stageTable)
                    ? checks.valid(() -> dialect.inSchema(schema, stageTable)) : null;
            checks.atLeast("batchSize", batchSize, 1);
            checks.commandTimeout("commandTimeout", commandTimeout);
            checks.throwIfAny();

            List<Column> columns = new ArrayList<>();
            for (String key : keyColumns) {
                columns.add(new Column(key, quoted.get(key), fieldByColumn.get(key), true));
            }
            fieldByColumn.forEach((column, field) -> {
                if (!keyColumns.contains(column)) {
                    columns.add(new Column(column, quoted.get(column), field, false));
                }
            });
            return new JdbcTableDestination(this, new TableMapping(target, positions, stage, columns));
        }
    }
}
