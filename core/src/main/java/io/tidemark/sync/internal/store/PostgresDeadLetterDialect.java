package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The dead-letter table on PostgreSQL. Claims are row updates that set a lease ({@code claimed_by},
 * {@code claimed_until}); a claim of one letter skips a row another transaction has locked
 * ({@code FOR UPDATE SKIP LOCKED}) instead of waiting for it, and a claim of a destination's next letters first
 * locks that destination's rows, so it waits for a concurrent claim to commit and then sees it.
 */
final class PostgresDeadLetterDialect extends DeadLetterDialect {

    PostgresDeadLetterDialect(QualifiedName table) {
        super(table);
    }

    @Override
    protected String json(String parameter) {
        return "CAST(:" + parameter + " AS json)";
    }

    @Override
    public String script() {
        return SqlTemplate.of("""
                -- A dead-letter table created by an earlier Tidemark is upgraded by JdbcDeadLetterStore.upgrade();
                -- this script stops rather than run over it.
                DO $$
                BEGIN
                    IF EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                                WHERE attrelid = to_regclass({{literal}}) AND attname = 'changes'
                                  AND NOT attisdropped) THEN
                        RAISE EXCEPTION {{message}};
                    END IF;
                END $$;

                {{create}};

                {{indexes}};
                """).with("literal", PgName.literal(letters))
                .with("message", PgName.literal(upgradeMessage().replace("%", "%%")))
                .with("create", createTable()).with("indexes", String.join(";\n\n", indexes())).render();
    }

    private String upgradeMessage() {
        return "The dead-letter table " + letters + " has the layout of an earlier Tidemark: upgrade it with"
                + " JdbcDeadLetterStore.upgrade()";
    }

    private String createTable() {
        return SqlTemplate.of("""
                -- One row per page a destination refused until its policy ran out of attempts; the same page
                -- refused again updates its row (attempts, failures, last_failed_at) instead of adding one.
                CREATE TABLE IF NOT EXISTS {{letters}} (
                    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    object_name     text        NOT NULL,
                    destination     text        NOT NULL,
                    idempotency_key text        NOT NULL,            -- the page's key, as the destination saw it
                    batch_id        text        NOT NULL,
                    page_number     integer     NOT NULL,
                    page_count      integer     NOT NULL,            -- 0 for letters kept before it was recorded
                    from_version    bigint      NOT NULL,
                    to_version      bigint      NOT NULL,
                    sync_type       text        NOT NULL,
                    reason_code     integer     NOT NULL,
                    change_count    integer     NOT NULL,
                    envelope        json        NOT NULL,            -- the page as offered, changes included
                    attempts        integer     NOT NULL,
                    failures        json        NOT NULL,            -- the last 20 failures: [{"at": ..., "error": ...}]
                    first_failed_at timestamptz NOT NULL,
                    last_failed_at  timestamptz NOT NULL,
                    claimed_by      text,                            -- the replay holding the letter ...
                    claimed_until   timestamptz                      -- ... until then (a dead replayer's claim lapses)
                )""").with("letters", letters).render();
    }

    /** An index and the statement that creates it. */
    private record Index(String name, String ddl) {
    }

    private List<String> indexes() {
        return indexDefinitions().stream().map(Index::ddl).toList();
    }

    private List<Index> indexDefinitions() {
        return List.of(
                new Index(index("_page_key"), SqlTemplate.of("""
                        -- One letter per object, destination and page.
                        CREATE UNIQUE INDEX IF NOT EXISTS {{index}}
                            ON {{letters}} (object_name, destination, idempotency_key)""")
                        .with("index", index("_page_key")).with("letters", letters).render()),
                new Index(index("_order_idx"), SqlTemplate.of("""
                        -- Listing and replay in version order.
                        CREATE INDEX IF NOT EXISTS {{index}}
                            ON {{letters}} (object_name, destination, from_version, page_number)""")
                        .with("index", index("_order_idx")).with("letters", letters).render()),
                new Index(index("_age_idx"), SqlTemplate.of("""
                        -- Purge by age.
                        CREATE INDEX IF NOT EXISTS {{index}}
                            ON {{letters}} (last_failed_at)""")
                        .with("index", index("_age_idx")).with("letters", letters).render()));
    }

    private String index(String suffix) {
        return PgName.quote(indexName(tableName, suffix, PgName.MAX_IDENTIFIER_BYTES));
    }

    @Override
    void createOrUpgrade(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            if (!Jdbc.queryBoolean(c, "SELECT to_regclass(?) IS NOT NULL", letters)) {
                s.execute(createTable());
            } else if (needsUpgrade(c)) {
                new DeadLetterUpgrade(letters, upgradeSteps()).run(c);
            }
            // Checked first: CREATE INDEX IF NOT EXISTS still needs ownership of the table, which an application
            // role using tables a DBA created rightly lacks.
            for (Index index : indexDefinitions()) {
                if (!Jdbc.queryBoolean(c, "SELECT to_regclass(?) IS NOT NULL", schema + "." + index.name())) {
                    s.execute(index.ddl());
                }
            }
        }
    }

    @Override
    public boolean needsUpgrade(Connection c) throws SQLException {
        return Jdbc.queryBoolean(c, """
                SELECT to_regclass(?) IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                                    WHERE attrelid = to_regclass(?) AND attname = 'idempotency_key'
                                      AND NOT attisdropped)""", letters, letters);
    }

    @Override
    DeadLetterUpgrade.Steps upgradeSteps() {
        return new DeadLetterUpgrade.Steps(
                SqlTemplate.of("""
                        ALTER TABLE {{letters}}
                            ADD COLUMN idempotency_key text,
                            ADD COLUMN page_count      integer,
                            ADD COLUMN envelope        json,
                            ADD COLUMN attempts        integer,
                            ADD COLUMN failures        json,
                            ADD COLUMN first_failed_at timestamptz,
                            ADD COLUMN last_failed_at  timestamptz,
                            ADD COLUMN claimed_by      text,
                            ADD COLUMN claimed_until   timestamptz""").with("letters", letters).render(),
                SqlTemplate.of("""
                        UPDATE {{letters}}
                           SET idempotency_key = ?, page_count = 0, envelope = CAST(? AS json), attempts = ?,
                               failures = CAST(? AS json), first_failed_at = created_at, last_failed_at = ?
                         WHERE id = ?""").with("letters", letters).render(),
                SqlTemplate.of("""
                        ALTER TABLE {{letters}}
                            ALTER COLUMN idempotency_key SET NOT NULL,
                            ALTER COLUMN page_count      SET NOT NULL,
                            ALTER COLUMN envelope        SET NOT NULL,
                            ALTER COLUMN attempts        SET NOT NULL,
                            ALTER COLUMN failures        SET NOT NULL,
                            ALTER COLUMN first_failed_at SET NOT NULL,
                            ALTER COLUMN last_failed_at  SET NOT NULL,
                            DROP COLUMN changes,
                            DROP COLUMN error,
                            DROP COLUMN created_at""").with("letters", letters).render());
    }

    @Override
    public String insert() {
        return SqlTemplate.of("""
                INSERT INTO {{letters}} (object_name, destination, idempotency_key, batch_id, page_number, page_count,
                       from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures,
                       first_failed_at, last_failed_at)
                VALUES (:objectName, :destination, :key, :batchId, :pageNumber, :pageCount,
                       :fromVersion, :toVersion, :syncType, :reasonCode, :changeCount, CAST(:envelope AS json),
                       :attempts, CAST(:failures AS json), :firstFailedAt, :lastFailedAt)
                ON CONFLICT (object_name, destination, idempotency_key) DO NOTHING
                RETURNING id""").with("letters", letters).render();
    }

    @Override
    public String selectPageForUpdate() {
        return SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}}
                 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key
                   FOR UPDATE""").with("columns", COLUMNS).with("letters", letters).render();
    }

    @Override
    public String selectClaimedForUpdate() {
        return SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}}
                 WHERE id = :id AND claimed_by = :claimant
                   FOR UPDATE""").with("columns", COLUMNS).with("letters", letters).render();
    }

    @Override
    public String claimOne() {
        return SqlTemplate.of("""
                UPDATE {{letters}} AS l
                   SET claimed_by = :claimant,
                       claimed_until = :until
                 WHERE l.id = (SELECT f.id
                                 FROM {{letters}} AS f
                                WHERE f.id = :id AND (f.claimed_until IS NULL OR f.claimed_until <= :now)
                                  FOR UPDATE SKIP LOCKED)
                RETURNING {{columns}}""").with("letters", letters).with("columns", columns("l.")).render();
    }

    @Override
    public String lockDestination() {
        return SqlTemplate.of("""
                SELECT id
                  FROM {{letters}}
                 WHERE object_name = :name AND destination = :destination
                 ORDER BY id
                   FOR UPDATE""").with("letters", letters).render();
    }

    @Override
    public String claimNext() {
        return SqlTemplate.of("""
                UPDATE {{letters}} AS l
                   SET claimed_by = :claimant,
                       claimed_until = :until
                 WHERE l.id IN (SELECT f.id
                                  FROM {{letters}} AS f
                                 WHERE f.object_name = :name AND f.destination = :destination
                                   AND (f.claimed_until IS NULL OR f.claimed_until <= :now)
                                 ORDER BY f.from_version, f.page_number, f.id
                                 LIMIT :limit)
                   -- Another replay of this destination still holds letters: claiming later ones would overtake it.
                   AND NOT EXISTS (SELECT 1
                                     FROM {{letters}} AS o
                                    WHERE o.object_name = :name AND o.destination = :destination
                                      AND o.claimed_by <> :claimant AND o.claimed_until > :now)
                RETURNING {{columns}}""").with("letters", letters).with("columns", columns("l.")).render();
    }
}
