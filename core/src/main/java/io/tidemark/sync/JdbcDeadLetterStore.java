package io.tidemark.sync;

import io.tidemark.sync.internal.jdbc.ConnectionLoss;
import io.tidemark.sync.internal.store.DeadLetterDialect;
import io.tidemark.sync.internal.store.FailuresJson;
import io.tidemark.sync.internal.store.JdbcStore;
import io.tidemark.sync.internal.store.JdbcStoreSupport;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Keeps dead letters in a table ({@code tidemark.dead_letters} by default), next to the watermarks: one row per
 * object, destination and page, with the page's envelope (changes included), the attempts and their errors, and
 * the first and last failure time. Claims for replay are a lease on the row ({@code claimed_by},
 * {@code claimed_until}), taken with row locks, so two replays in two processes never send the same letter.
 *
 * <p>A table created by an earlier Tidemark is upgraded when the store is built (unless
 * {@link Builder#createTables(boolean) createTables(false)}), or by {@link #upgrade()}.
 */
public final class JdbcDeadLetterStore implements DeadLetterStore, JdbcStore {

    /** How often {@link #record} tries when a concurrent record of the same page keeps winning the insert. */
    private static final int RECORD_ROUNDS = 3;

    private static final RowMapper<DeadLetter> LETTER = (rs, ctx) -> new DeadLetter(
            rs.getLong("id"), rs.getString("object_name"), rs.getString("destination"),
            rs.getString("idempotency_key"), rs.getString("batch_id"), rs.getInt("page_number"),
            rs.getInt("page_count"), rs.getLong("from_version"), rs.getLong("to_version"),
            SyncType.valueOf(rs.getString("sync_type")), rs.getInt("reason_code"), rs.getInt("change_count"),
            rs.getString("envelope"), rs.getInt("attempts"), FailuresJson.read(rs.getString("failures")),
            rs.getObject("first_failed_at", OffsetDateTime.class).toInstant(),
            rs.getObject("last_failed_at", OffsetDateTime.class).toInstant());

    private final JdbcStoreSupport support;
    private final DataSource dataSource;

    private JdbcDeadLetterStore(JdbcStoreSupport support, DataSource dataSource) {
        this.support = support;
        this.dataSource = dataSource;
    }

    public static JdbcDeadLetterStore create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** For the engine's coordination: the lease tables live next to this store's. Not for applications. */
    @Override
    public JdbcStoreSupport support() {
        return support;
    }

    private DeadLetterDialect sql() {
        return support.dialect().deadLetters();
    }

    /** The DDL of the store's tables, formatted for review. */
    public String script() {
        return support.dialect().createScript();
    }

    /**
     * Creates the store's missing tables and upgrades a dead-letter table created by an earlier Tidemark to the
     * current layout (its letters are kept), in one transaction; safe to call again. For a store built with
     * {@code createTables(false)}; a store that creates its tables does this when it is built.
     */
    public void upgrade() {
        try (Connection c = dataSource.getConnection()) {
            support.dialect().createIfMissing(c);
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.STORE_FAILED, "Could not create or upgrade the dead-letter table: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Connects and reads the table: a closed port is {@code CONNECTION_FAILED}, a missing table or one with an
     * earlier layout {@code STORE_FAILED}.
     */
    @Override
    public List<CheckReport.Problem> check() {
        List<CheckReport.Problem> problems = support.check("dead-letter store", sql().selectByObject());
        if (!problems.isEmpty() && needsUpgrade()) {
            return List.of(new CheckReport.Problem("dead-letter store", ErrorCode.STORE_FAILED, upgradeAdvice()));
        }
        return problems;
    }

    @Override
    public DeadLetter record(DeadLetter letter) {
        try {
            for (int round = 1; ; round++) {
                Optional<DeadLetter> stored = recordOnce(letter);
                if (stored.isPresent()) {
                    return stored.get();
                }
                if (round == RECORD_ROUNDS) {
                    throw TidemarkException.forObject(ErrorCode.STORE_FAILED, letter.objectName(), "could not"
                            + " record dead letter " + letter.idempotencyKey() + " for destination '"
                            + letter.destination() + "': a concurrent record of the same page won " + round
                            + " times in a row; the letter is recorded the next time the page fails");
                }
            }
        } catch (JdbiException e) {
            throw failure("record a dead letter for destination '" + letter.destination() + "'",
                    letter.objectName(), e);
        }
    }

    /**
     * Updates the page's letter, or inserts it; empty when a concurrent insert of the same page won (PostgreSQL
     * inserts nothing then; SQL Server reports a duplicate key) or the database chose this transaction as a deadlock
     * victim, so the caller tries again and updates that letter.
     */
    private Optional<DeadLetter> recordOnce(DeadLetter letter) {
        try {
            return support.jdbi().inTransaction(h -> {
                support.fence(h, letter.objectName());
                Optional<DeadLetter> existing = h.createQuery(sql().selectPageForUpdate())
                        .bind("name", letter.objectName())
                        .bind("destination", letter.destination())
                        .bind("key", letter.idempotencyKey())
                        .map(LETTER).findOne();
                if (existing.isPresent()) {
                    DeadLetter merged = existing.get().mergedWith(letter);
                    bindFailures(h.createUpdate(sql().updateFailures()), merged).bind("id", merged.id()).execute();
                    return Optional.of(merged);
                }
                return insert(h, letter);
            });
        } catch (JdbiException e) {
            if (isDuplicateKey(e) || isDeadlock(e)) {
                return Optional.empty();
            }
            throw e;
        }
    }

    private Optional<DeadLetter> insert(Handle h, DeadLetter letter) {
        return bindFailures(h.createUpdate(sql().insert()), letter)
                .bind("objectName", letter.objectName())
                .bind("destination", letter.destination())
                .bind("key", letter.idempotencyKey())
                .bind("batchId", letter.batchId())
                .bind("pageNumber", letter.pageNumber())
                .bind("pageCount", letter.pageCount())
                .bind("fromVersion", letter.fromVersion())
                .bind("toVersion", letter.toVersion())
                .bind("syncType", letter.syncType().name())
                .bind("reasonCode", letter.reasonCode())
                .bind("changeCount", letter.changeCount())
                .bind("envelope", letter.envelope())
                .executeAndReturnGeneratedKeys("id")
                .mapTo(Long.class)
                .findOne()
                .map(letter::withId);
    }

    private static <S extends SqlStatement<S>> S bindFailures(S statement, DeadLetter letter) {
        return statement.bind("attempts", letter.attempts())
                .bind("failures", FailuresJson.write(letter.failures()))
                .bind("firstFailedAt", JdbcWatermarkStore.timestamp(letter.firstFailedAt()))
                .bind("lastFailedAt", JdbcWatermarkStore.timestamp(letter.lastFailedAt()));
    }

    /**
     * Runs a claim again when the database chose it as a deadlock victim (its transaction was rolled back, so nothing
     * was claimed): claims of one destination lock its rows, and on SQL Server the key-range locks of two claims can
     * still meet in a cycle.
     */
    private static <T> T retryingDeadlocks(Supplier<T> claim) {
        for (int attempt = 1; ; attempt++) {
            try {
                return claim.get();
            } catch (JdbiException e) {
                if (attempt == 3 || !isDeadlock(e)) {
                    throw e;
                }
            }
        }
    }

    /** A deadlock victim: SQLState 40P01 (PostgreSQL), error 1205 (SQL Server). */
    private static boolean isDeadlock(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s && ("40P01".equals(s.getSQLState()) || s.getErrorCode() == 1205)) {
                return true;
            }
        }
        return false;
    }

    /** A duplicate key on the page's unique index: SQLState 23505 (PostgreSQL), error 2627 or 2601 (SQL Server). */
    private static boolean isDuplicateKey(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s && ("23505".equals(s.getSQLState()) || s.getErrorCode() == 2627
                    || s.getErrorCode() == 2601)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public List<DeadLetter> list(String objectName) {
        try {
            return support.jdbi().withHandle(h -> h.createQuery(sql().selectByObject())
                    .bind("name", objectName)
                    .map(LETTER)
                    .list());
        } catch (JdbiException e) {
            throw failure("read dead letters", objectName, e);
        }
    }

    @Override
    public List<DeadLetter> list(String objectName, String destination) {
        try {
            return support.jdbi().withHandle(h -> h.createQuery(sql().selectByDestination())
                    .bind("name", objectName)
                    .bind("destination", destination)
                    .map(LETTER)
                    .list());
        } catch (JdbiException e) {
            throw failure("read the dead letters of destination '" + destination + "'", objectName, e);
        }
    }

    @Override
    public Optional<DeadLetter> find(long id) {
        try {
            return support.jdbi().withHandle(h -> h.createQuery(sql().selectById())
                    .bind("id", id)
                    .map(LETTER)
                    .findOne());
        } catch (JdbiException e) {
            throw failure("read dead letter " + id, "*", e);
        }
    }

    @Override
    public Optional<DeadLetter> claim(long id, String claimant, Instant now, Instant until) {
        try {
            return support.jdbi().inTransaction(h -> h.createQuery(sql().claimOne())
                    .bind("id", id)
                    .bind("claimant", claimant)
                    .bind("now", JdbcWatermarkStore.timestamp(now))
                    .bind("until", JdbcWatermarkStore.timestamp(until))
                    .map(LETTER)
                    .findOne());
        } catch (JdbiException e) {
            throw failure("claim dead letter " + id, "*", e);
        }
    }

    @Override
    public List<DeadLetter> claimNext(String objectName, String destination, String claimant, Instant now,
                                      Instant until, int limit) {
        try {
            List<DeadLetter> claimed = retryingDeadlocks(() -> support.jdbi().inTransaction(h -> {
                // First wait for, and then see, any concurrent claim on this destination's letters.
                h.createQuery(sql().lockDestination())
                        .bind("name", objectName)
                        .bind("destination", destination)
                        .mapTo(Long.class).list();
                return h.createQuery(sql().claimNext())
                        .bind("name", objectName)
                        .bind("destination", destination)
                        .bind("claimant", claimant)
                        .bind("now", JdbcWatermarkStore.timestamp(now))
                        .bind("until", JdbcWatermarkStore.timestamp(until))
                        .bind("limit", limit)
                        .map(LETTER)
                        .list();
            }));
            List<DeadLetter> ordered = new ArrayList<>(claimed);
            ordered.sort(InMemoryDeadLetterStore.VERSION_ORDER);
            return ordered;
        } catch (JdbiException e) {
            throw failure("claim the dead letters of destination '" + destination + "'", objectName, e);
        }
    }

    @Override
    public boolean resolve(long id, String claimant) {
        try {
            return support.jdbi().withHandle(h -> h.createUpdate(sql().resolveClaimed())
                    .bind("id", id).bind("claimant", claimant).execute()) == 1;
        } catch (JdbiException e) {
            throw failure("resolve dead letter " + id, "*", e);
        }
    }

    @Override
    public boolean resolve(String objectName, String destination, String idempotencyKey) {
        try {
            // In a transaction only when fenced: the engine resolves a letter once the position passed its page.
            org.jdbi.v3.core.HandleCallback<Integer, RuntimeException> resolve = h -> {
                support.fence(h, objectName);
                return h.createUpdate(sql().resolveByKey())
                        .bind("name", objectName).bind("destination", destination).bind("key", idempotencyKey)
                        .execute();
            };
            return (support.fenced(objectName) ? support.jdbi().inTransaction(resolve)
                    : support.jdbi().withHandle(resolve)) > 0;
        } catch (JdbiException e) {
            throw failure("resolve dead letter " + idempotencyKey + " of destination '" + destination + "'",
                    objectName, e);
        }
    }

    @Override
    public boolean release(long id, String claimant) {
        try {
            return support.jdbi().withHandle(h -> h.createUpdate(sql().release())
                    .bind("id", id).bind("claimant", claimant).execute()) == 1;
        } catch (JdbiException e) {
            throw failure("release dead letter " + id, "*", e);
        }
    }

    @Override
    public boolean releaseFailed(long id, String claimant, DeadLetter.Failure failure) {
        try {
            return support.jdbi().inTransaction(h -> {
                Optional<DeadLetter> held = h.createQuery(sql().selectClaimedForUpdate())
                        .bind("id", id).bind("claimant", claimant).map(LETTER).findOne();
                if (held.isEmpty()) {
                    return false;
                }
                DeadLetter failed = held.get().withFailure(failure);
                return bindFailures(h.createUpdate(sql().updateFailuresAndRelease()), failed)
                        .bind("id", id).bind("claimant", claimant).execute() == 1;
            });
        } catch (JdbiException e) {
            throw failure("record a failed replay of dead letter " + id, "*", e);
        }
    }

    @Override
    public boolean delete(long id) {
        try {
            return support.jdbi().withHandle(h -> h.createUpdate(sql().delete())
                    .bind("id", id).execute()) == 1;
        } catch (JdbiException e) {
            throw failure("delete dead letter " + id, "*", e);
        }
    }

    @Override
    public int purge(Instant olderThan) {
        try {
            return support.jdbi().withHandle(h -> h.createUpdate(sql().purge())
                    .bind("olderThan", JdbcWatermarkStore.timestamp(olderThan)).execute());
        } catch (JdbiException e) {
            throw failure("purge dead letters older than " + olderThan, "*", e);
        }
    }

    /** A failed operation; a table with an earlier layout gets advice on the call that upgrades it. */
    private TidemarkException failure(String what, String objectName, JdbiException e) {
        if (!ConnectionLoss.isConnectionLoss(e) && needsUpgrade()) {
            return TidemarkException.forObject(ErrorCode.STORE_FAILED, objectName, "could not " + what + ": "
                    + upgradeAdvice(), e);
        }
        return support.failure(what, objectName, e);
    }

    private boolean needsUpgrade() {
        try (Connection c = dataSource.getConnection()) {
            return sql().needsUpgrade(c);
        } catch (SQLException e) {
            return false;
        }
    }

    private static String upgradeAdvice() {
        return "the dead-letter table has the layout of an earlier Tidemark (one row per refusal, no idempotency"
                + " key). Upgrade it, keeping its letters, with JdbcDeadLetterStore.upgrade(), or build the store"
                + " with createTables(true)";
    }

    /** Configures a {@link JdbcDeadLetterStore}. */
    public static final class Builder {
        private final DataSource dataSource;
        private String schema = JdbcStoreSupport.DEFAULT_SCHEMA;
        private String stateTable = JdbcStoreSupport.DEFAULT_STATE_TABLE;
        private String table = JdbcStoreSupport.DEFAULT_DEAD_LETTER_TABLE;
        private boolean createTables = true;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /** The dead-letter table; default {@code dead_letters}. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** The watermark table created next to it; default {@code sync_state}. */
        public Builder stateTable(String table) {
            this.stateTable = table;
            return this;
        }

        /**
         * Whether building the store creates missing tables and upgrades a dead-letter table of an earlier
         * layout (default true). With false, create them from {@link JdbcDeadLetterStore#script()} and upgrade with
         * {@link JdbcDeadLetterStore#upgrade()}.
         */
        public Builder createTables(boolean createTables) {
            this.createTables = createTables;
            return this;
        }

        public JdbcDeadLetterStore build() {
            return new JdbcDeadLetterStore(new JdbcStoreSupport("JdbcDeadLetterStore", dataSource, schema, stateTable,
                    table, createTables), dataSource);
        }
    }
}
