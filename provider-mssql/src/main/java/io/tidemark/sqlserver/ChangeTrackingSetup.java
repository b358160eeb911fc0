package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Generates the database and table setup that change procedures need, as a script to review and run
 * ({@link #script()}) or to install directly ({@link #install(DataSource)}):
 * <ol>
 *   <li>{@code ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON (CHANGE_RETENTION = ..., AUTO_CLEANUP = ON)};</li>
 *   <li>{@code ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON};</li>
 *   <li>{@code ALTER TABLE ... ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON)} for each table.</li>
 * </ol>
 *
 * <pre>{@code
 * String sql = ChangeTrackingSetup.builder()
 *         .retention(Duration.ofDays(7))
 *         .table("dbo.Items")
 *         .build()
 *         .script();
 * }</pre>
 *
 * <p>The script is safe to run again: what is set up is left alone, except that a retention shorter than the one
 * asked for is raised (never lowered: other consumers may rely on a longer one). It targets the database it runs
 * in ({@code ALTER DATABASE CURRENT}), and needs ALTER permission on the database and the tables.
 */
public final class ChangeTrackingSetup {

    /** Seven days: long enough for a weekend outage without a full re-sync. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

    private static final int ERROR_TABLE_MISSING = 51010;
    private static final int ERROR_NO_PRIMARY_KEY = 51011;

    private final Duration retention;
    private final Map<SqlServerName, Boolean> tables;

    private ChangeTrackingSetup(Builder b) {
        this.retention = b.retention;
        this.tables = new LinkedHashMap<>(b.tables);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The setup script, commented for review, batches separated by {@code GO}. */
    public String script() {
        List<String> names = tables.keySet().stream().map(SqlServerName::quoted).toList();
        StringBuilder steps = new StringBuilder();
        int step = 3;
        for (Map.Entry<SqlServerName, Boolean> table : tables.entrySet()) {
            steps.append(table(step++, table.getKey().quoted(), table.getValue()));
        }
        return TSqlScript.banner(
                "Tidemark Change Tracking setup for the current database"
                        + (names.isEmpty() ? "" : " and table" + (names.size() == 1 ? " " : "s ")
                        + String.join(", ", names)),
                "",
                "Review it, then run it in the database to track, as a user with ALTER permission on the database",
                "and the tables. Running it again is safe: what is set up is left alone, except that a retention",
                "shorter than " + retentionText() + " is raised.")
                + "\n" + database() + SNAPSHOT_ISOLATION + steps;
    }

    /** Runs the script, batch by batch. */
    public void install(DataSource dataSource) {
        TSqlScript.run(dataSource, script(), "the Change Tracking setup");
    }

    public Duration retention() {
        return retention;
    }

    /** The tables, bracket-quoted, in the order they were added. */
    public List<String> tables() {
        return tables.keySet().stream().map(SqlServerName::quoted).toList();
    }

    private String database() {
        return SqlTemplate.of("""
                -- 1. Change Tracking on the database. Change information is kept for {{retention}}: a
                --    Tidemark engine stopped for longer than that loses its place, and its next cycle is a full
                --    re-sync (ReasonCode 1). AUTO_CLEANUP removes older change information, so the internal
                --    tables do not grow without bound.
                IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_databases WHERE database_id = DB_ID())
                    ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON (CHANGE_RETENTION = {{retention}}, AUTO_CLEANUP = ON);
                ELSE IF EXISTS (
                    SELECT 1 FROM sys.change_tracking_databases
                    WHERE database_id = DB_ID()
                      -- retention_period_units: 1 = MINUTES, 2 = HOURS, 3 = DAYS
                      AND CAST(retention_period AS BIGINT) * CASE retention_period_units WHEN 1 THEN 1 WHEN 2 THEN 60 ELSE 1440 END < {{retention_minutes}})
                    ALTER DATABASE CURRENT SET CHANGE_TRACKING (CHANGE_RETENTION = {{retention}});
                GO

                """)
                .with("retention", retentionText())
                .with("retention_minutes", retention.toMinutes())
                .render();
    }

    private static final String SNAPSHOT_ISOLATION = """
            -- 2. Snapshot isolation, so that a change procedure reads the version and the rows in one snapshot.
            --    Without it every call fails with "snapshot isolation is not allowed in this database".
            --    Readers under other isolation levels are not affected. Turning it on waits until the
            --    transactions open at that moment have finished.
            --    snapshot_isolation_state: 0 = OFF, 1 = ON, 2 = going OFF, 3 = going ON
            IF (SELECT snapshot_isolation_state FROM sys.databases WHERE database_id = DB_ID()) NOT IN (1, 3)
                ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON;
            GO

            """;

    private static String table(int step, String table, boolean trackColumns) {
        String name = SqlServerName.literal(table);
        return SqlTemplate.of("""
                -- {{step}}. Change Tracking on {{table}}{{columns_comment}}
                IF OBJECT_ID({{name}}, N'U') IS NULL
                    THROW {{table_missing}}, {{table_missing_message}}, 1;
                IF OBJECTPROPERTY(OBJECT_ID({{name}}), 'TableHasPrimaryKey') = 0
                    THROW {{no_primary_key}}, {{no_primary_key_message}}, 1;
                IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID({{name}}))
                    ALTER TABLE {{table}} ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = {{track_columns}});
                {{columns_not_tracked}}GO

                """)
                .with("step", step)
                .with("table", table)
                .with("name", name)
                .with("columns_comment", trackColumns
                        ? ", recording which columns each update changed\n"
                                + "--    (TRACK_COLUMNS_UPDATED), which the \"$changed\" array of a change procedure reads."
                        : ", without recording which columns updates change\n"
                                + "--    (a change procedure then reports every column of an update as changed).")
                .with("table_missing", ERROR_TABLE_MISSING)
                .with("table_missing_message", SqlServerName.literal("Tidemark setup: table " + table
                        + " does not exist."))
                .with("no_primary_key", ERROR_NO_PRIMARY_KEY)
                .with("no_primary_key_message", SqlServerName.literal("Tidemark setup: Change Tracking needs a primary"
                        + " key on " + table + "; add one first."))
                .with("track_columns", trackColumns ? "ON" : "OFF")
                .with("columns_not_tracked", trackColumns ? SqlTemplate.of("""
                        ELSE IF EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID({{name}}) AND is_track_columns_updated_on = 0)
                            PRINT {{message}};
                        """)
                        .with("name", name)
                        .with("message", SqlServerName.literal("Tidemark setup: Change Tracking on " + table
                                + " does not record which columns updates change, so column-level change procedures"
                                + " send whole rows. To record them, run ALTER TABLE " + table + " DISABLE"
                                + " CHANGE_TRACKING and this script again; that restarts the table's change history,"
                                + " and consumers get a full re-sync."))
                        .render() : "")
                .render();
    }

    /** The retention in the largest unit that states it exactly: {@code 7 DAYS}, {@code 36 HOURS}, {@code 90 MINUTES}. */
    String retentionText() {
        long minutes = retention.toMinutes();
        if (minutes % (24 * 60) == 0) {
            return minutes / (24 * 60) + " DAYS";
        }
        if (minutes % 60 == 0) {
            return minutes / 60 + " HOURS";
        }
        return minutes + " MINUTES";
    }

    /** Configures a {@link ChangeTrackingSetup}. */
    public static final class Builder {
        private Duration retention = DEFAULT_RETENTION;
        /** Filled by {@link #build()} from {@link #requested}, checked. */
        private final Map<SqlServerName, Boolean> tables = new LinkedHashMap<>();
        private final List<Map.Entry<String, Boolean>> requested = new ArrayList<>();

        private Builder() {
        }

        /** How long Change Tracking keeps change information; whole minutes, 7 days unless set. */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /** A table to track, recording the columns updates change ({@code TRACK_COLUMNS_UPDATED = ON}). */
        public Builder table(String table) {
            return table(table, true);
        }

        /** A table to track; {@code trackColumnsUpdated} false only for table-level procedures on very hot tables. */
        public Builder table(String table, boolean trackColumnsUpdated) {
            requested.add(new AbstractMap.SimpleImmutableEntry<>(table, trackColumnsUpdated));
            return this;
        }

        /** Checks every value at once (setters only store) and builds the setup. */
        public ChangeTrackingSetup build() {
            Checks checks = Checks.of("ChangeTrackingSetup");
            tables.clear();
            for (Map.Entry<String, Boolean> entry : requested) {
                SqlServerName name = checks.valid(
                        () -> SqlServerName.parse(entry.getKey(), "table").withDefaultSchema("dbo"));
                if (name != null) {
                    checks.that(!tables.containsKey(name), "table " + name.quoted() + " is listed twice");
                    tables.put(name, entry.getValue());
                }
            }
            if (retention == null || retention.isNegative() || retention.toMinutes() < 1
                    || !retention.equals(Duration.ofMinutes(retention.toMinutes()))) {
                checks.add("retention must be a whole number of minutes, at least one, got " + retention);
            } else if (retention.toMinutes() > Integer.MAX_VALUE) {
                checks.add("retention is too long: " + retention);
            }
            checks.throwIfAny();
            return new ChangeTrackingSetup(this);
        }
    }
}
