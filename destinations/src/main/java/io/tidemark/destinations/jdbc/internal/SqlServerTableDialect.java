package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.StringJoiner;

/**
 * SQL Server: {@code MERGE ... WITH (HOLDLOCK)} for the upsert and the position row (without {@code HOLDLOCK} two
 * sessions can both find no row and both insert), the position it replaces returned by {@code OUTPUT deleted}; texts bound as
 * strings, which SQL Server converts to the column's type; NULLs bound with the column's own JDBC type.
 */
public final class SqlServerTableDialect extends TableDialect {

    /** Serialises first-time creation by several processes ({@code IF OBJECT_ID ... CREATE} can race). */
    private static final String DDL_LOCK_RESOURCE = "tidemark-destination-ddl";
    private static final int DDL_LOCK_TIMEOUT_MS = 30_000;

    /** Destination and object names are compared exactly, whatever the database's collation. */
    private static final String NAME_TYPE = "NVARCHAR(200) COLLATE Latin1_General_100_BIN2";

    @Override
    public String database() {
        return "SQL Server";
    }

    @Override
    public QualifiedName table(String text, String what) {
        return SqlServerName.parse(text, what).withDefaultSchema(defaultSchema());
    }

    @Override
    public String defaultSchema() {
        return "dbo";
    }

    @Override
    public QualifiedName inSchema(String schema, String name) {
        return SqlServerName.of(schema, name);
    }

    @Override
    public String quoteColumn(String column) {
        return SqlServerName.quote(SqlServerName.checkPart(column, "column"));
    }

    @Override
    public String createScript(TableMapping m) {
        return SqlTemplate.of("""
                {{header}}
                IF OBJECT_ID({{positions_literal}}, N'U') IS NULL
                {{create_positions}};
                GO

                IF OBJECT_ID({{stage_literal}}, N'U') IS NULL
                {{create_stage}};
                GO
                """)
                .with("header", SCRIPT_HEADER)
                .with("positions_literal", SqlServerName.literal(m.positions().quoted()))
                .with("create_positions", createPositions(m))
                .with("stage_literal", SqlServerName.literal(m.stage().quoted()))
                .with("create_stage", createStage(m))
                .render();
    }

    @Override
    protected String createPositions(TableMapping m) {
        return SqlTemplate.of("""
                CREATE TABLE {{positions}} (
                    destination_name {{name_type}} NOT NULL,
                    object_name      {{name_type}} NOT NULL,
                    from_version     BIGINT            NULL, -- NULL until the first page is applied
                    to_version       BIGINT            NULL,
                    page_number      INT               NULL,
                    page_count       INT               NULL,
                    idempotency_key  VARCHAR(40)       NULL,
                    sync_type        VARCHAR(10)       NULL, -- FULL or DIFF
                    applied_at       DATETIMEOFFSET(6) NULL,
                    PRIMARY KEY (destination_name, object_name)
                )""").with("positions", m.positions().quoted()).with("name_type", NAME_TYPE).render();
    }

    @Override
    protected String createStage(TableMapping m) {
        return SqlTemplate.of("""
                CREATE TABLE {{stage}} (
                    destination_name {{name_type}} NOT NULL,
                    object_name      {{name_type}} NOT NULL,
                    page_number      INT           NOT NULL,
                    ordinal          INT           NOT NULL,
                    change_json      NVARCHAR(MAX) NOT NULL, -- the change as the procedure returned it
                    PRIMARY KEY (destination_name, object_name, page_number, ordinal)
                )""").with("stage", m.stage().quoted()).with("name_type", NAME_TYPE).render();
    }

    /** Takes an application lock owned by the transaction: released by its commit or rollback. */
    @Override
    protected void lockCreation(Connection c) throws SQLException {
        try (CallableStatement call = c.prepareCall("{? = call sp_getapplock(?, ?, ?, ?)}")) {
            call.registerOutParameter(1, Types.INTEGER);
            call.setString(2, DDL_LOCK_RESOURCE);
            call.setString(3, "Exclusive");
            call.setString(4, "Transaction");
            call.setInt(5, DDL_LOCK_TIMEOUT_MS);
            call.execute();
            if (call.getInt(1) < 0) {
                throw new SQLException("sp_getapplock('" + DDL_LOCK_RESOURCE + "') returned " + call.getInt(1)
                        + ": another session held the table creation lock for more than "
                        + DDL_LOCK_TIMEOUT_MS / 1000 + " s", "HY008");
            }
        }
    }

    @Override
    protected boolean exists(Connection c, QualifiedName table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT CASE WHEN OBJECT_ID(?, N'U') IS NULL THEN 0 ELSE 1 END")) {
            ps.setString(1, table.quoted());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1;
            }
        }
    }

    @Override
    public String claimPosition(TableMapping m) {
        return SqlTemplate.of("""
                -- Records the page as the position (creating the row on first use) and returns the position it
                -- replaces (OUTPUT deleted.*, NULLs for a new row); HOLDLOCK keeps the row locked until the page
                -- commits, so a concurrent delivery of the same page waits here and then sees this one's page.
                MERGE {{positions}} WITH (HOLDLOCK) AS p
                USING (SELECT CAST(? AS NVARCHAR(200)) AS destination_name, -- compared in the column's collation
                              CAST(? AS NVARCHAR(200)) AS object_name,
                              CAST(? AS BIGINT) AS from_version,
                              CAST(? AS BIGINT) AS to_version,
                              CAST(? AS INT) AS page_number,
                              CAST(? AS INT) AS page_count,
                              CAST(? AS VARCHAR(40)) AS idempotency_key,
                              CAST(? AS VARCHAR(10)) AS sync_type) AS s
                   ON p.destination_name = s.destination_name
                  AND p.object_name = s.object_name
                 WHEN MATCHED THEN UPDATE
                      SET from_version = s.from_version,
                          to_version = s.to_version,
                          page_number = s.page_number,
                          page_count = s.page_count,
                          idempotency_key = s.idempotency_key,
                          sync_type = s.sync_type,
                          applied_at = SYSDATETIMEOFFSET()
                 WHEN NOT MATCHED THEN INSERT
                      (destination_name, object_name, from_version, to_version, page_number, page_count,
                       idempotency_key, sync_type, applied_at)
                      VALUES (s.destination_name, s.object_name, s.from_version, s.to_version, s.page_number,
                              s.page_count, s.idempotency_key, s.sync_type, SYSDATETIMEOFFSET())
                OUTPUT deleted.from_version, deleted.to_version, deleted.page_number, deleted.page_count,
                       deleted.sync_type;""")
                .with("positions", m.positions().quoted())
                .render();
    }

    @Override
    public String upsert(TableMapping m, String mask, int rows) {
        List<Column> columns = columnsOf(m, mask);
        List<Column> others = columns.stream().filter(c -> !c.key()).toList();
        StringJoiner on = new StringJoiner("\n  AND ");
        keyColumns(m).forEach(c -> on.add("t." + c.quoted() + " = s." + c.quoted()));
        String whenMatched = "";
        if (!others.isEmpty()) {
            StringJoiner sets = new StringJoiner(",\n          ");
            others.forEach(c -> sets.add(c.quoted() + " = s." + c.quoted()));
            whenMatched = SqlTemplate.of("""
                     WHEN MATCHED THEN UPDATE
                          SET {{sets}}
                    """).with("sets", sets.toString()).render();
        }
        return SqlTemplate.of("""
                MERGE {{table}} WITH (HOLDLOCK) AS t
                USING (VALUES {{rows}}) AS s ({{columns}})
                   ON {{key_matches}}
                {{when_matched}} WHEN NOT MATCHED THEN INSERT ({{columns}})
                      VALUES ({{source_columns}});""")
                .with("table", m.table().quoted())
                .with("rows", valueRows(columns.size(), rows, "              "))
                .with("columns", joined(columns, "", ", "))
                .with("key_matches", on.toString())
                .with("when_matched", whenMatched)
                .with("source_columns", joined(columns, "s.", ", "))
                .render();
    }

    @Override
    public String delete(TableMapping m, int rows) {
        List<Column> keys = keyColumns(m);
        StringJoiner on = new StringJoiner("\n   AND ");
        keys.forEach(c -> on.add("t." + c.quoted() + " = d." + c.quoted()));
        return SqlTemplate.of("""
                DELETE t
                  FROM {{table}} AS t
                  JOIN (VALUES {{rows}}) AS d ({{key}})
                    ON {{key_matches}}""")
                .with("table", m.table().quoted())
                .with("rows", valueRows(keys.size(), rows, "              "))
                .with("key", joined(keys, "", ", "))
                .with("key_matches", on.toString())
                .render();
    }

    /** 2100 is SQL Server's limit per request; a little is left for the driver. */
    @Override
    protected int maxParameters() {
        return 2_000;
    }

    @Override
    public void bindText(PreparedStatement ps, int index, String text) throws SQLException {
        ps.setString(index, text);
    }

    @Override
    public void bindNull(PreparedStatement ps, int index, int columnType) throws SQLException {
        ps.setNull(index, columnType);
    }

}
