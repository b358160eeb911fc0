package io.tidemark.sqlserver;

import io.tidemark.sqlserver.internal.ProcedureScript;
import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.sql.SqlServerName;

import javax.sql.DataSource;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Generates a correct Change Tracking change procedure for one table, as a script to review and run
 * ({@link #script()}) or to install directly ({@link #install(DataSource)}).
 *
 * <pre>{@code
 * ChangeProcedureGenerator items = ChangeProcedureGenerator.forTable("dbo.Items")
 *         .keyColumns("ItemCode")
 *         .columns("Description", "Assortment")
 *         .level(ChangeProcedureGenerator.Level.COLUMN)
 *         .build();
 * String sql = items.script();                          // CREATE OR ALTER PROCEDURE [dbo].[Items_changes] ...
 * TrackedObject tracked = items.trackedObject("Items");  // procedure and table filled in
 * }</pre>
 *
 * <p>The procedure follows every rule of the procedure contract and of the Change Tracking reference:
 * {@code SET NOCOUNT ON} and {@code SET XACT_ABORT ON}; the version, the validity check and the rows read in one
 * snapshot transaction; {@code BIGINT} versions; a version older than {@code CHANGE_TRACKING_MIN_VALID_VERSION}
 * answered with a full snapshot ({@code Type} Full, {@code ReasonCode} 1); {@code RIGHT OUTER JOIN} to
 * {@code CHANGETABLE} so deletes are kept; {@code CHANGE_TRACKING_IS_COLUMN_IN_MASK} for changed columns and the
 * {@code $changed} array on updates; no {@code INCLUDE_NULL_VALUES}; {@code FOR JSON PATH, WITHOUT_ARRAY_WRAPPER};
 * the same row shape for Full and Diff; and the {@code maxRows} hint honoured without splitting a version.
 *
 * <p>Column names are given as the catalog holds them (no brackets). They become the JSON keys, so a name with a
 * {@code .} (which {@code FOR JSON PATH} would turn into a nested object) or starting with {@code $} (the
 * contract's own keys) is refused.
 */
public final class ChangeProcedureGenerator {

    /** Which columns an update carries. */
    public enum Level {
        /** Every column, with {@code $changed} listing those the update changed. Works without column tracking. */
        TABLE,
        /** Only the columns the update changed (and {@code $changed}); needs {@code TRACK_COLUMNS_UPDATED = ON}. */
        COLUMN
    }

    private final SqlServerName table;
    private final SqlServerName procedure;
    private final List<String> keyColumns;
    private final List<String> columns;
    private final Level level;

    private ChangeProcedureGenerator(Builder b) {
        this.table = b.table;
        this.procedure = b.procedure;
        this.keyColumns = List.copyOf(b.keyColumns);
        this.columns = List.copyOf(b.columns);
        this.level = b.level;
    }

    /** Starts a generator for a table, {@code schema.name} or {@code name} (schema {@code dbo}). */
    public static Builder forTable(String table) {
        return new Builder(table);
    }

    /** The {@code CREATE OR ALTER PROCEDURE} script, commented for review, ending with {@code GO}. */
    public String script() {
        return new ProcedureScript(table.quoted(), procedure.quoted(), keyColumns, columns, level == Level.COLUMN)
                .render();
    }

    /** Creates or alters the procedure. The login needs CREATE PROCEDURE and ALTER on the schema. */
    public void install(DataSource dataSource) {
        TSqlScript.run(dataSource, script(), "change procedure " + procedure.quoted());
    }

    /** A tracked object calling this procedure, with the table set for the aged-out check. */
    public TrackedObject trackedObject(String objectName) {
        return TrackedObject.of(objectName, procedure.quoted()).table(table.quoted());
    }

    /** The procedure, bracket-quoted: {@code [schema].[name]}. */
    public String procedureName() {
        return procedure.quoted();
    }

    /** The table, bracket-quoted: {@code [schema].[name]}. */
    public String tableName() {
        return table.quoted();
    }

    public List<String> keyColumns() {
        return keyColumns;
    }

    public List<String> columns() {
        return columns;
    }

    public Level level() {
        return level;
    }

    /** Configures a {@link ChangeProcedureGenerator}; everything is checked at {@link #build()}. */
    public static final class Builder {
        private final String tableText;
        private SqlServerName table;
        private String procedureText;
        private SqlServerName procedure;
        private List<String> keyColumns = List.of();
        private List<String> columns = List.of();
        private Level level = Level.TABLE;

        private Builder(String table) {
            this.tableText = table;
        }

        /** The table's primary key columns, in key order. Required. */
        public Builder keyColumns(String... names) {
            this.keyColumns = names == null ? null : Arrays.asList(names.clone());
            return this;
        }

        /** The other columns to send, in the order they should appear. */
        public Builder columns(String... names) {
            this.columns = names == null ? null : Arrays.asList(names.clone());
            return this;
        }

        /** The procedure to create; {@code <schema>.<table>_changes} unless set. */
        public Builder procedure(String name) {
            this.procedureText = name;
            return this;
        }

        /** {@link Level#TABLE} unless set. */
        public Builder level(Level level) {
            this.level = level;
            return this;
        }

        /** Checks every value at once (setters only store) and builds the generator; runs no SQL. */
        public ChangeProcedureGenerator build() {
            Checks checks = Checks.of("ChangeProcedureGenerator for " + tableText);
            table = checks.valid(() -> SqlServerName.parse(tableText, "table").withDefaultSchema("dbo"));
            if (table != null) {
                procedure = checks.valid(() -> procedureText == null
                        ? SqlServerName.of(table.schema().orElseThrow(), table.name() + "_changes")
                        : SqlServerName.parse(procedureText, "procedure").withDefaultSchema(table.schema().orElseThrow()));
            }
            checks.notNull("level", level);
            if (checks.noNulls("keyColumns", keyColumns)) {
                checks.that(!keyColumns.isEmpty(), "needs the key columns of "
                        + (table == null ? tableText : table.quoted()) + " (its primary key): keyColumns(...)."
                        + " CHANGETABLE reports changed rows by their primary key");
            }
            boolean columnsGiven = checks.noNulls("columns", columns);
            Set<String> seen = new HashSet<>();
            if (keyColumns != null && keyColumns.stream().allMatch(k -> k != null)) {
                keyColumns.forEach(key -> check(checks, key, "key column", seen));
            }
            if (columnsGiven) {
                columns.forEach(column -> check(checks, column, "column", seen));
            }
            checks.throwIfAny();
            keyColumns = List.copyOf(keyColumns);
            columns = List.copyOf(columns);
            return new ChangeProcedureGenerator(this);
        }

        private static void check(Checks checks, String name, String what, Set<String> seen) {
            if (checks.valid(() -> SqlServerName.checkPart(name, what)) == null) {
                return;
            }
            checks.that(name.indexOf('.') < 0, "the " + what + " name '" + name + "' contains a '.', which FOR JSON"
                    + " PATH turns into a nested object; rename the column or write the procedure by hand with an"
                    + " alias");
            checks.that(!name.startsWith("$"), "the " + what + " name '" + name + "' starts with '$', which the"
                    + " procedure contract reserves for its own keys ($operation, $version, $changed)");
            // Column names compare case-insensitively under the usual collations: two spellings are one column.
            checks.that(seen.add(name.toLowerCase(Locale.ROOT)), "the column '" + name + "' is listed twice (key"
                    + " columns and columns must not overlap)");
        }
    }
}
