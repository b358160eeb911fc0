package io.tidemark.history;

import javax.sql.DataSource;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The reference trigger shape, kept verbatim in src/test/resources/reference/policies-reference-shape.sql and
 * reproduced here statement for statement (the listing's function with the table, columns and key substituted; see
 * history-trigger/README.md#what-the-trigger-does for its rules), so tests can show what each fix changes and
 * benchmarks can measure it. Names are unqualified and nothing pins search_path, exactly as in the listing.
 */
public final class ReferenceShape {

    private final String table;
    private final String history;
    private final String function;
    private final List<String> columns;
    private final String key;
    private final String prefix;

    private ReferenceShape(String table, String history, String function, List<String> columns, String key,
                           String prefix) {
        this.table = table;
        this.history = history;
        this.function = function;
        this.columns = columns;
        this.key = key;
        this.prefix = prefix;
    }

    /** {@code <table>_history}, {@code <table>_history_write()}, change context read from {@code hindsight.*}. */
    public static ReferenceShape of(String table, String key, List<String> columns) {
        return new ReferenceShape(table, table + "_history", table + "_history_write", columns, key, "hindsight");
    }

    public ReferenceShape withHistory(String historyTable, String functionName) {
        return new ReferenceShape(table, historyTable, functionName, columns, key, prefix);
    }

    public ReferenceShape withSettingsPrefix(String settingsPrefix) {
        return new ReferenceShape(table, history, function, columns, key, settingsPrefix);
    }

    public String historyTable() {
        return history;
    }

    /**
     * A history table the listing's function can write: the user's columns with the given types, then the period,
     * operation and context columns; an index on (key, valid_from DESC) so its lookups are not table scans.
     */
    public String historyTableDdl(List<String> columnTypes) {
        StringBuilder sql = new StringBuilder("CREATE TABLE " + history + " (history_id bigint GENERATED ALWAYS AS"
                + " IDENTITY PRIMARY KEY");
        for (int i = 0; i < columns.size(); i++) {
            sql.append(", ").append(columns.get(i)).append(' ').append(columnTypes.get(i));
        }
        return sql.append(", valid_from timestamptz NOT NULL, valid_to timestamptz NOT NULL DEFAULT 'infinity',"
                + " operation smallint NOT NULL, changed_by text, changed_by_name text, correlation_id text,"
                + " reason text, extra jsonb);\n"
                + "CREATE INDEX ON " + history + " (" + key + ", valid_from DESC);\n").toString();
    }

    /** The listing's function and trigger, with this table's names substituted. */
    public String functionAndTrigger() {
        String cols = String.join(", ", columns);
        String newCols = columns.stream().map(c -> "NEW." + c).collect(Collectors.joining(", "));
        String oldCols = columns.stream().map(c -> "OLD." + c).collect(Collectors.joining(", "));
        String insert = "INSERT INTO " + history + " (" + cols + ", valid_from, valid_to, operation, changed_by,"
                + " changed_by_name, correlation_id, reason, extra)\n";
        String close = "UPDATE " + history + " SET valid_to = GREATEST(_now, valid_from + INTERVAL '1 microsecond')"
                + " WHERE " + key + " = OLD." + key + " AND valid_to = 'infinity'::timestamp with time zone"
                + " RETURNING valid_to INTO _closed_at;\n";
        return "CREATE OR REPLACE FUNCTION " + function + "() RETURNS trigger\n"
                + "LANGUAGE plpgsql AS $hindsight$\n"
                + "DECLARE\n"
                + "    _now timestamp with time zone := now();\n"
                + "    _closed_at timestamp with time zone;\n"
                + "    _changed_by text := nullif(current_setting('" + prefix + ".changed_by', true), '');\n"
                + "    _changed_by_name text := nullif(current_setting('" + prefix + ".changed_by_name', true), '');\n"
                + "    _correlation_id text := nullif(current_setting('" + prefix + ".correlation_id', true), '');\n"
                + "    _reason text := nullif(current_setting('" + prefix + ".reason', true), '');\n"
                + "    _extra jsonb := nullif(current_setting('" + prefix + ".extra', true), '')::jsonb;\n"
                + "BEGIN\n"
                + "    IF (TG_OP = 'INSERT') THEN\n"
                + "        " + insert
                + "        VALUES (" + newCols + ", _now, 'infinity'::timestamp with time zone, 1, _changed_by,"
                + " _changed_by_name, _correlation_id, _reason, _extra);\n"
                + "        RETURN NEW;\n"
                + "    ELSIF (TG_OP = 'UPDATE') THEN\n"
                + "        IF (" + newCols + ") IS NOT DISTINCT FROM (" + oldCols + ") THEN\n"
                + "            RETURN NEW;\n"
                + "        END IF;\n"
                + "        " + close
                + "        " + insert
                + "        VALUES (" + newCols + ", COALESCE(_closed_at, _now), 'infinity'::timestamp with time zone, 2,"
                + " _changed_by, _changed_by_name, _correlation_id, _reason, _extra);\n"
                + "        RETURN NEW;\n"
                + "    ELSIF (TG_OP = 'DELETE') THEN\n"
                + "        " + close
                + "        " + insert
                + "        VALUES (" + oldCols + ", COALESCE(_closed_at, _now), COALESCE(_closed_at, _now), 3,"
                + " _changed_by, _changed_by_name, _correlation_id, _reason, _extra);\n"
                + "        RETURN OLD;\n"
                + "    END IF;\n"
                + "    RETURN NULL;\n"
                + "END;\n"
                + "$hindsight$;\n"
                + "\n\n"
                + "CREATE OR REPLACE TRIGGER " + history + "_trg AFTER INSERT OR UPDATE OR DELETE ON " + table
                + " FOR EACH ROW EXECUTE FUNCTION " + function + "();\n";
    }

    /** History table and trigger in one go. */
    public void install(DataSource ds, List<String> columnTypes) {
        Db.exec(ds, historyTableDdl(columnTypes) + functionAndTrigger());
    }

    /** Our invariant checker pointed at the reference's history (it needs only the names and the primary key). */
    public TemporalTable checkerView() {
        return TemporalTable.forTable(table).historyTable(history).build();
    }
}
