package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

/**
 * The SQL of the JDBC table destination for one database. What both dialects write the same way (deletes, the
 * stage, the position update) lives here, with names quoted by the dialect; the upsert, the position lock, the DDL
 * and how a text or a NULL is bound differ.
 */
public abstract class TableDialect {

    /** The opening comment of both dialects' {@code script()}: what the two tables are for. */
    protected static final String SCRIPT_HEADER = """
            -- Tidemark JDBC table destination: its two tables in the target database.
            -- The position table holds, per destination and tracked object, the last page applied to the
            -- target table; it is written in the same transaction as the page, so a page is applied once.
            -- The stage table holds the pages of a FULL export until its last page replaces the table's
            -- content. Safe to run again.""";

    /** The database's name, for messages: "PostgreSQL". */
    public abstract String database();

    /** Parses a table name the database's way, with {@code defaultSchema} when none is given. */
    public abstract QualifiedName table(String text, String what);

    /** The schema a table without one is looked up in. */
    public abstract String defaultSchema();

    /** A name of one part in {@code schema}. */
    public abstract QualifiedName inSchema(String schema, String name);

    /** Checks one column name (taken as written, as the catalog spells it) and returns it quoted. */
    public abstract String quoteColumn(String column);

    /** The script that creates the position and stage tables, for a DBA to review or run. */
    public abstract String createScript(TableMapping m);

    /**
     * Creates whichever of the position and stage tables is missing, under a lock that serialises first-time
     * creation by several processes ({@code IF NOT EXISTS} can still race). Existence is looked up first: creating
     * needs rights a role handed ready tables may rightly lack.
     */
    public void createMissing(Connection c, TableMapping m) throws SQLException {
        if (exists(c, m.positions()) && exists(c, m.stage())) {
            return;
        }
        lockCreation(c);
        try (Statement s = c.createStatement()) {
            if (!exists(c, m.positions())) {
                s.execute(createPositions(m));
            }
            if (!exists(c, m.stage())) {
                s.execute(createStage(m));
            }
        }
    }

    /** Whether {@code table} exists. */
    protected abstract boolean exists(Connection c, QualifiedName table) throws SQLException;

    /** Takes a lock held until the transaction ends that serialises the creation of the tables. */
    protected abstract void lockCreation(Connection c) throws SQLException;

    /** The position table's CREATE TABLE. */
    protected abstract String createPositions(TableMapping m);

    /** The stage table's CREATE TABLE. */
    protected abstract String createStage(TableMapping m);

    /**
     * Records the page as this destination's position for the object, creating the row when missing, and returns
     * the position it replaced: {@code from_version, to_version, page_number, page_count, sync_type} (NULLs when
     * there was none). One statement locks, reads and writes, so a page costs one round trip for its bookkeeping;
     * when the old position says the page was applied already, the transaction is rolled back, undoing the write.
     * Parameters: destination, object, from, to, page, count, idempotency key, sync type.
     */
    public abstract String claimPosition(TableMapping m);

    /**
     * Inserts or updates {@code rows} rows (of distinct keys) writing the columns of {@code mask} (one 0/1 per
     * mapped column); parameters: the rows' values, row after row.
     */
    public abstract String upsert(TableMapping m, String mask, int rows);

    /** The most parameters one statement may carry (SQL Server: 2100; PostgreSQL: 65535). */
    protected abstract int maxParameters();

    /**
     * How many rows one upsert or delete carries: up to {@value #ROWS_PER_STATEMENT}, fewer when that many rows of
     * {@code columns} columns would pass the database's parameter limit. Several rows per statement cut the
     * statements the server parses, plans and answers by that factor.
     */
    public int rowsPerStatement(int columns) {
        return Math.max(1, Math.min(ROWS_PER_STATEMENT, maxParameters() / Math.max(1, columns)));
    }

    /** Rows per upsert statement at most. */
    public static final int ROWS_PER_STATEMENT = 128;

    /** {@code (?, ?, ?)} rows of {@code columns} placeholders, one per line after the first. */
    protected static String valueRows(int columns, int rows, String indent) {
        String row = "(" + String.join(", ", java.util.Collections.nCopies(columns, "?")) + ")";
        return String.join(",\n" + indent, java.util.Collections.nCopies(rows, row));
    }

    /** Binds a JSON string (or a JSON object or array as its text) so the server converts it to the column's type. */
    public abstract void bindText(PreparedStatement ps, int index, String text) throws SQLException;

    /** Binds a NULL for a column of JDBC type {@code columnType}. */
    public abstract void bindNull(PreparedStatement ps, int index, int columnType) throws SQLException;

    /** Updates the non-key columns of {@code mask} of one row; parameters: those columns, then the key. */
    public String update(TableMapping m, String mask) {
        StringJoiner sets = new StringJoiner(",\n       ");
        for (Column c : columnsOf(m, mask)) {
            if (!c.key()) {
                sets.add(c.quoted() + " = ?");
            }
        }
        StringJoiner where = new StringJoiner("\n   AND ");
        for (Column c : keyColumns(m)) {
            where.add(c.quoted() + " = ?");
        }
        return SqlTemplate.of("""
                UPDATE {{table}}
                   SET {{sets}}
                 WHERE {{key_matches}}""")
                .with("table", m.table().quoted())
                .with("sets", sets.toString())
                .with("key_matches", where.toString())
                .render();
    }

    /** Deletes {@code rows} rows by their keys; parameters: the keys, row after row. */
    public abstract String delete(TableMapping m, int rows);

    /** Empties the table, inside the transaction that writes a FULL export's content: readers see old or new. */
    public String deleteAll(TableMapping m) {
        return SqlTemplate.of("""
                -- A FULL export replaces the table's content; DELETE (not TRUNCATE) so that readers keep seeing
                -- the old content until the transaction that writes the new one commits.
                DELETE FROM {{table}}""").with("table", m.table().quoted()).render();
    }

    /** Stages one change of a FULL export; parameters: destination, object, page, ordinal, the change's JSON. */
    public String stageInsert(TableMapping m) {
        return SqlTemplate.of("""
                INSERT INTO {{stage}} (destination_name, object_name, page_number, ordinal, change_json)
                VALUES (?, ?, ?, ?, ?)""").with("stage", m.stage().quoted()).render();
    }

    /** One staged page's changes in their order; parameters: destination, object, page. */
    public String stageRead(TableMapping m) {
        return SqlTemplate.of("""
                SELECT change_json
                  FROM {{stage}}
                 WHERE destination_name = ?
                   AND object_name = ?
                   AND page_number = ?
                 ORDER BY ordinal""").with("stage", m.stage().quoted()).render();
    }

    /** Forgets the staged changes; parameters: destination, object. */
    public String stageClear(TableMapping m) {
        return SqlTemplate.of("""
                DELETE FROM {{stage}}
                 WHERE destination_name = ?
                   AND object_name = ?""").with("stage", m.stage().quoted()).render();
    }

    /** Every statement the destination runs, with a comment line each: what the golden files hold. */
    public String statements(TableMapping m) {
        String all = "1".repeat(m.columns().size());
        String keysAndFirst = "1".repeat(m.keyCount()) + (m.columns().size() > m.keyCount() ? "1" : "")
                + "0".repeat(Math.max(0, m.columns().size() - m.keyCount() - 1));
        List<String[]> parts = new ArrayList<>();
        parts.add(new String[] {"record the position, returning the one it replaces", claimPosition(m)});
        parts.add(new String[] {"upsert, every column", upsert(m, all, 1)});
        parts.add(new String[] {"upsert, every column, three rows in one statement", upsert(m, all, 3)});
        parts.add(new String[] {"upsert, the key and the first other column", upsert(m, keysAndFirst, 1)});
        parts.add(new String[] {"update of some columns ($changed, updates only)", update(m, keysAndFirst)});
        parts.add(new String[] {"upsert, the key only", upsert(m, "1".repeat(m.keyCount())
                + "0".repeat(m.columns().size() - m.keyCount()), 1)});
        parts.add(new String[] {"delete", delete(m, 1)});
        parts.add(new String[] {"delete, three rows in one statement", delete(m, 3)});
        parts.add(new String[] {"FULL: replace the content", deleteAll(m)});
        parts.add(new String[] {"FULL: stage a page", stageInsert(m)});
        parts.add(new String[] {"FULL: read a staged page", stageRead(m)});
        parts.add(new String[] {"FULL: forget the staged pages", stageClear(m)});
        StringBuilder out = new StringBuilder();
        for (String[] part : parts) {
            out.append("-- ").append(part[0]).append('\n').append(part[1]).append("\n\n");
        }
        return out.toString();
    }

    protected static List<Column> keyColumns(TableMapping m) {
        return m.columns().stream().filter(Column::key).toList();
    }

    /** The columns of {@code mask}, in mapping order. */
    protected static List<Column> columnsOf(TableMapping m, String mask) {
        List<Column> out = new ArrayList<>();
        for (int i = 0; i < mask.length(); i++) {
            if (mask.charAt(i) == '1') {
                out.add(m.columns().get(i));
            }
        }
        return out;
    }

    protected static String joined(List<Column> columns, String prefix, String separator) {
        StringJoiner out = new StringJoiner(separator);
        for (Column c : columns) {
            out.add(prefix + c.quoted());
        }
        return out.toString();
    }
}
