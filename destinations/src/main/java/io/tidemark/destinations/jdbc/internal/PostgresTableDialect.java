package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;
import java.util.StringJoiner;

/**
 * PostgreSQL: {@code INSERT ... ON CONFLICT (key) DO UPDATE}, the position recorded by an upsert that returns
 * the one it replaced, texts and NULLs bound with an unspecified type so the server reads them as the column's type (a timestamp,
 * a uuid, a jsonb), exactly as it would a literal.
 */
public final class PostgresTableDialect extends TableDialect {

    /** Serialises first-time creation by several processes (CREATE TABLE IF NOT EXISTS can still race). */
    private static final long DDL_LOCK_KEY = 0x746D_6465_7374_6464L; // "tmdestdd"

    @Override
    public String database() {
        return "PostgreSQL";
    }

    @Override
    public QualifiedName table(String text, String what) {
        return PgName.parse(text, what).withDefaultSchema(defaultSchema());
    }

    @Override
    public String defaultSchema() {
        return "public";
    }

    @Override
    public QualifiedName inSchema(String schema, String name) {
        return PgName.of(schema, name);
    }

    @Override
    public String quoteColumn(String column) {
        return PgName.quote(PgName.checkPart(column, "column"));
    }

    @Override
    public String createScript(TableMapping m) {
        return SqlTemplate.of("""
                {{header}}
                {{create_positions}};

                {{create_stage}};
                """)
                .with("header", SCRIPT_HEADER)
                .with("create_positions", createPositions(m))
                .with("create_stage", createStage(m))
                .render();
    }

    @Override
    protected String createPositions(TableMapping m) {
        return SqlTemplate.of("""
                CREATE TABLE IF NOT EXISTS {{positions}} (
                    destination_name text        NOT NULL,
                    object_name      text        NOT NULL,
                    from_version     bigint          NULL, -- NULL until the first page is applied
                    to_version       bigint          NULL,
                    page_number      integer         NULL,
                    page_count       integer         NULL,
                    idempotency_key  text            NULL,
                    sync_type        text            NULL, -- FULL or DIFF
                    applied_at       timestamptz     NULL,
                    -- the position the last page replaced: returned by the statement that records a page
                    previous_from_version bigint     NULL,
                    previous_to_version   bigint     NULL,
                    previous_page_number  integer    NULL,
                    previous_page_count   integer    NULL,
                    previous_sync_type    text       NULL,
                    PRIMARY KEY (destination_name, object_name)
                )""").with("positions", m.positions().quoted()).render();
    }

    @Override
    protected String createStage(TableMapping m) {
        return SqlTemplate.of("""
                CREATE TABLE IF NOT EXISTS {{stage}} (
                    destination_name text    NOT NULL,
                    object_name      text    NOT NULL,
                    page_number      integer NOT NULL,
                    ordinal          integer NOT NULL,
                    change_json      text    NOT NULL, -- the change as the procedure returned it
                    PRIMARY KEY (destination_name, object_name, page_number, ordinal)
                )""").with("stage", m.stage().quoted()).render();
    }

    @Override
    protected void lockCreation(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(SqlTemplate.of("SELECT pg_advisory_xact_lock({{key}})").with("key", DDL_LOCK_KEY).render());
        }
    }

    @Override
    protected boolean exists(Connection c, QualifiedName table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table.quoted());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }

    @Override
    public String claimPosition(TableMapping m) {
        return SqlTemplate.of("""
                -- Records the page as the position (creating the row on first use) and returns the position it
                -- replaces, kept in the previous_* columns: in an ON CONFLICT update the old row is the one locked,
                -- so a concurrent delivery of the same page waits here and then sees this one's page.
                INSERT INTO {{positions}} AS p
                       (destination_name, object_name, from_version, to_version, page_number, page_count,
                        idempotency_key, sync_type, applied_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, now())
                ON CONFLICT (destination_name, object_name) DO UPDATE
                   SET previous_from_version = p.from_version,
                       previous_to_version = p.to_version,
                       previous_page_number = p.page_number,
                       previous_page_count = p.page_count,
                       previous_sync_type = p.sync_type,
                       from_version = EXCLUDED.from_version,
                       to_version = EXCLUDED.to_version,
                       page_number = EXCLUDED.page_number,
                       page_count = EXCLUDED.page_count,
                       idempotency_key = EXCLUDED.idempotency_key,
                       sync_type = EXCLUDED.sync_type,
                       applied_at = EXCLUDED.applied_at
                RETURNING p.previous_from_version, p.previous_to_version, p.previous_page_number,
                          p.previous_page_count, p.previous_sync_type""")
                .with("positions", m.positions().quoted())
                .render();
    }

    @Override
    public String upsert(TableMapping m, String mask, int rows) {
        List<Column> columns = columnsOf(m, mask);
        List<Column> others = columns.stream().filter(c -> !c.key()).toList();
        String onConflict;
        if (others.isEmpty()) {
            onConflict = "DO NOTHING";
        } else {
            StringJoiner sets = new StringJoiner(",\n       ");
            others.forEach(c -> sets.add(c.quoted() + " = EXCLUDED." + c.quoted()));
            onConflict = SqlTemplate.of("""
                    DO UPDATE
                       SET {{sets}}""").with("sets", sets.toString()).render();
        }
        return SqlTemplate.of("""
                INSERT INTO {{table}} ({{columns}})
                VALUES {{rows}}
                ON CONFLICT ({{key}}) {{on_conflict}}""")
                .with("table", m.table().quoted())
                .with("columns", joined(columns, "", ", "))
                .with("rows", valueRows(columns.size(), rows, "       "))
                .with("key", joined(keyColumns(m), "", ", "))
                .with("on_conflict", onConflict)
                .render();
    }

    @Override
    public String delete(TableMapping m, int rows) {
        List<Column> keys = keyColumns(m);
        String match = keys.size() == 1
                ? keys.get(0).quoted() + " IN (" + String.join(", ", java.util.Collections.nCopies(rows, "?")) + ")"
                : "(" + joined(keys, "", ", ") + ") IN (\n       " + valueRows(keys.size(), rows, "       ") + ")";
        return SqlTemplate.of("""
                DELETE FROM {{table}}
                 WHERE {{key_matches}}""")
                .with("table", m.table().quoted())
                .with("key_matches", match)
                .render();
    }

    @Override
    protected int maxParameters() {
        return 65_535;
    }

    @Override
    public void bindText(PreparedStatement ps, int index, String text) throws SQLException {
        ps.setObject(index, text, Types.OTHER);
    }

    @Override
    public void bindNull(PreparedStatement ps, int index, int columnType) throws SQLException {
        ps.setNull(index, Types.OTHER);
    }

}
