package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlServerName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The dead-letter table on SQL Server. Claims are row updates that set a lease ({@code claimed_by},
 * {@code claimed_until}); a claim of one letter reads past a row another transaction has locked
 * ({@code READPAST, UPDLOCK, ROWLOCK}) instead of waiting for it, and a claim of a destination's next letters
 * first locks that destination's rows ({@code UPDLOCK, HOLDLOCK}), so it waits for a concurrent claim to commit and
 * then sees it. Recording a letter reads its page with {@code UPDLOCK, HOLDLOCK}: the key-range lock makes a
 * concurrent record of the same page wait and then update the row the first one inserted.
 *
 * <p>Names and keys are stored with a binary collation, like the watermark table's object names: the engine
 * tells them apart by exact text.
 */
final class SqlServerDeadLetterDialect extends DeadLetterDialect {

    private static final String NAME_TYPE = "NVARCHAR(200) COLLATE Latin1_General_100_BIN2";
    private static final String KEY_TYPE = "VARCHAR(64) COLLATE Latin1_General_100_BIN2";

    SqlServerDeadLetterDialect(QualifiedName table) {
        super(table);
    }

    @Override
    protected String json(String parameter) {
        return ":" + parameter;
    }

    @Override
    public String script() {
        StringBuilder script = new StringBuilder(SqlTemplate.of("""
                -- A dead-letter table created by an earlier Tidemark is upgraded by JdbcDeadLetterStore.upgrade();
                -- this script stops rather than run over it.
                IF COL_LENGTH({{literal}}, N'changes') IS NOT NULL
                    THROW 50000, {{message}}, 1;
                GO

                -- One row per page a destination refused until its policy ran out of attempts; the same page
                -- refused again updates its row (attempts, failures, last_failed_at) instead of adding one.
                IF OBJECT_ID({{literal}}, N'U') IS NULL
                {{create}};
                GO
                """).with("literal", SqlServerName.literal(letters))
                .with("message", SqlServerName.literal(upgradeMessage()))
                .with("create", createTable()).render());
        for (Index index : indexes()) {
            script.append(SqlTemplate.of("""

                    IF INDEXPROPERTY(OBJECT_ID({{literal}}), {{name}}, N'IndexID') IS NULL
                        {{create}};
                    GO
                    """).with("literal", SqlServerName.literal(letters))
                    .with("name", SqlServerName.literal(index.name())).with("create", index.ddl()).render());
        }
        return script.toString();
    }

    private String upgradeMessage() {
        return "The dead-letter table " + letters + " has the layout of an earlier Tidemark: upgrade it with"
                + " JdbcDeadLetterStore.upgrade()";
    }

    private String createTable() {
        return SqlTemplate.of("""
                CREATE TABLE {{letters}} (
                    id              BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,
                    object_name     {{name_type}} NOT NULL,
                    destination     {{name_type}} NOT NULL,
                    idempotency_key {{key_type}} NOT NULL, -- the page's key
                    batch_id        NVARCHAR(MAX)     NOT NULL,
                    page_number     INT               NOT NULL,
                    page_count      INT               NOT NULL, -- 0 for letters kept before it was recorded
                    from_version    BIGINT            NOT NULL,
                    to_version      BIGINT            NOT NULL,
                    sync_type       NVARCHAR(10)      NOT NULL,
                    reason_code     INT               NOT NULL,
                    change_count    INT               NOT NULL,
                    envelope        NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(envelope) = 1), -- the page as offered
                    attempts        INT               NOT NULL,
                    failures        NVARCHAR(MAX)     NOT NULL CHECK (ISJSON(failures) = 1), -- the last 20
                    first_failed_at DATETIMEOFFSET(6) NOT NULL,
                    last_failed_at  DATETIMEOFFSET(6) NOT NULL,
                    claimed_by      NVARCHAR(200)     NULL, -- the replay holding the letter ...
                    claimed_until   DATETIMEOFFSET(6) NULL  -- ... until then (a dead replayer's claim lapses)
                )""").with("letters", letters).with("name_type", NAME_TYPE).with("key_type", KEY_TYPE).render();
    }

    private record Index(String name, String ddl) {
    }

    private List<Index> indexes() {
        String pageKey = index("_page_key");
        String order = index("_order_idx");
        String age = index("_age_idx");
        return List.of(
                new Index(pageKey, SqlTemplate.of("""
                        CREATE UNIQUE INDEX {{index}} ON {{letters}} (object_name, destination, idempotency_key)""")
                        .with("index", SqlServerName.quote(pageKey)).with("letters", letters).render()),
                new Index(order, SqlTemplate.of("""
                        CREATE INDEX {{index}} ON {{letters}} (object_name, destination, from_version, page_number)""")
                        .with("index", SqlServerName.quote(order)).with("letters", letters).render()),
                new Index(age, SqlTemplate.of("CREATE INDEX {{index}} ON {{letters}} (last_failed_at)")
                        .with("index", SqlServerName.quote(age)).with("letters", letters).render()));
    }

    private String index(String suffix) {
        return indexName(tableName, suffix, SqlServerName.MAX_IDENTIFIER_LENGTH);
    }

    @Override
    void createOrUpgrade(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            if (isNull(c, "SELECT OBJECT_ID(?, N'U')", letters)) {
                s.execute(createTable());
            } else if (needsUpgrade(c)) {
                new DeadLetterUpgrade(letters, upgradeSteps()).run(c);
            }
            for (Index index : indexes()) {
                if (isNull(c, "SELECT INDEXPROPERTY(OBJECT_ID(?), ?, N'IndexID')", letters, index.name())) {
                    s.execute(index.ddl());
                }
            }
        }
    }

    @Override
    public boolean needsUpgrade(Connection c) throws SQLException {
        return !isNull(c, "SELECT OBJECT_ID(?, N'U')", letters)
                && isNull(c, "SELECT COL_LENGTH(?, N'idempotency_key')", letters);
    }

    @Override
    DeadLetterUpgrade.Steps upgradeSteps() {
        return new DeadLetterUpgrade.Steps(
                SqlTemplate.of("""
                        ALTER TABLE {{letters}} ADD
                            idempotency_key {{key_type}} NULL,
                            page_count      INT               NULL,
                            envelope        NVARCHAR(MAX)     NULL,
                            attempts        INT               NULL,
                            failures        NVARCHAR(MAX)     NULL,
                            first_failed_at DATETIMEOFFSET(6) NULL,
                            last_failed_at  DATETIMEOFFSET(6) NULL,
                            claimed_by      NVARCHAR(200)     NULL,
                            claimed_until   DATETIMEOFFSET(6) NULL""")
                        .with("letters", letters).with("key_type", KEY_TYPE).render(),
                SqlTemplate.of("""
                        UPDATE {{letters}}
                           SET idempotency_key = ?, page_count = 0, envelope = ?, attempts = ?, failures = ?,
                               first_failed_at = created_at, last_failed_at = ?
                         WHERE id = ?""").with("letters", letters).render(),
                SqlTemplate.of("""
                        ALTER TABLE {{letters}} ALTER COLUMN destination {{name_type}} NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN idempotency_key {{key_type}} NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN page_count INT NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN envelope NVARCHAR(MAX) NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN attempts INT NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN failures NVARCHAR(MAX) NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN first_failed_at DATETIMEOFFSET(6) NOT NULL;
                        ALTER TABLE {{letters}} ALTER COLUMN last_failed_at DATETIMEOFFSET(6) NOT NULL;
                        ALTER TABLE {{letters}} ADD CHECK (ISJSON(envelope) = 1), CHECK (ISJSON(failures) = 1);
                        -- The old changes column carries an unnamed CHECK constraint, which must go first.
                        DECLARE @drop NVARCHAR(MAX) = N'';
                        SELECT @drop += N'ALTER TABLE ' + {{letters_literal}} + N' DROP CONSTRAINT ' + QUOTENAME(cc.name) + N';'
                          FROM sys.check_constraints AS cc
                          JOIN sys.columns AS col
                            ON col.object_id = cc.parent_object_id AND col.column_id = cc.parent_column_id
                         WHERE cc.parent_object_id = OBJECT_ID({{letters_literal}}) AND col.name = N'changes';
                        EXEC sp_executesql @drop;
                        ALTER TABLE {{letters}} DROP COLUMN changes, error, created_at;""")
                        .with("letters", letters).with("letters_literal", SqlServerName.literal(letters))
                        .with("name_type", NAME_TYPE).with("key_type", KEY_TYPE).render());
    }

    private static boolean isNull(Connection c, String sql, String... names) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < names.length; i++) {
                ps.setNString(i + 1, names[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rs.getObject(1);
                return rs.wasNull();
            }
        }
    }

    /**
     * A plain {@code INSERT}: the driver appends {@code SELECT SCOPE_IDENTITY()} for the generated id. An
     * {@code OUTPUT} clause would return a second result set that the driver could mistake for the keys.
     */
    @Override
    public String insert() {
        return SqlTemplate.of("""
                INSERT INTO {{letters}} (object_name, destination, idempotency_key, batch_id, page_number, page_count,
                       from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures,
                       first_failed_at, last_failed_at)
                VALUES (:objectName, :destination, :key, :batchId, :pageNumber, :pageCount,
                       :fromVersion, :toVersion, :syncType, :reasonCode, :changeCount, :envelope,
                       :attempts, :failures, :firstFailedAt, :lastFailedAt)""").with("letters", letters).render();
    }

    @Override
    public String selectPageForUpdate() {
        return SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}} WITH (UPDLOCK, HOLDLOCK)
                 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key""")
                .with("columns", COLUMNS).with("letters", letters).render();
    }

    @Override
    public String selectClaimedForUpdate() {
        return SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}} WITH (UPDLOCK, ROWLOCK)
                 WHERE id = :id AND claimed_by = :claimant""").with("columns", COLUMNS).with("letters", letters)
                .render();
    }

    @Override
    public String claimOne() {
        return SqlTemplate.of("""
                UPDATE l
                   SET claimed_by = :claimant,
                       claimed_until = :until
                OUTPUT {{columns}}
                  FROM {{letters}} AS l WITH (READPAST, UPDLOCK, ROWLOCK)
                 WHERE l.id = :id AND (l.claimed_until IS NULL OR l.claimed_until <= :now);""")
                .with("letters", letters).with("columns", columns("inserted.")).render();
    }

    @Override
    public String lockDestination() {
        return SqlTemplate.of("""
                SELECT id
                  FROM {{letters}} WITH (UPDLOCK, HOLDLOCK, ROWLOCK)
                 WHERE object_name = :name AND destination = :destination""").with("letters", letters).render();
    }

    @Override
    public String claimNext() {
        return SqlTemplate.of("""
                UPDATE l
                   SET claimed_by = :claimant,
                       claimed_until = :until
                OUTPUT {{columns}}
                  FROM {{letters}} AS l
                 WHERE l.id IN (SELECT TOP (:limit) f.id
                                  FROM {{letters}} AS f
                                 WHERE f.object_name = :name AND f.destination = :destination
                                   AND (f.claimed_until IS NULL OR f.claimed_until <= :now)
                                 ORDER BY f.from_version, f.page_number, f.id)
                   -- Another replay of this destination still holds letters: claiming later ones would overtake it.
                   AND NOT EXISTS (SELECT 1
                                     FROM {{letters}} AS o
                                    WHERE o.object_name = :name AND o.destination = :destination
                                      AND o.claimed_by <> :claimant AND o.claimed_until > :now);""")
                .with("letters", letters).with("columns", columns("inserted.")).render();
    }
}
