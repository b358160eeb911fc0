package io.tidemark.sync.internal.store;

import io.tidemark.sync.internal.sql.QualifiedName;
import io.tidemark.sync.internal.sql.SqlTemplate;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The dead-letter table's SQL. What is plain SQL on both databases is built here; the subclasses give the DDL,
 * the upgrade of a table created by an earlier Tidemark, the JSON casts and the locking clauses.
 *
 * <p>Statements use JDBI named parameters. Version order is {@code from_version, page_number, id} everywhere.
 */
public abstract class DeadLetterDialect {

    /** The columns a {@link io.tidemark.sync.spi.DeadLetter} is read from, in the order the table declares them. */
    static final String COLUMNS = "id, object_name, destination, idempotency_key, batch_id, page_number, page_count,"
            + " from_version, to_version, sync_type, reason_code, change_count, envelope, attempts, failures,"
            + " first_failed_at, last_failed_at";

    /** The column only a table created before letters were kept per page lacks; its absence means "upgrade". */
    static final String KEY_COLUMN = "idempotency_key";

    static final String VERSION_ORDER = "from_version, page_number, id";

    /** The table, quoted and schema-qualified. */
    protected final String letters;
    /** The table's own name, unquoted, from which its indexes are named. */
    protected final String tableName;
    /** The table's schema, quoted. */
    protected final String schema;

    private final String selectByObject;
    private final String selectByDestination;
    private final String selectById;
    private final String updateFailures;
    private final String updateFailuresAndRelease;
    private final String resolveClaimed;
    private final String resolveByKey;
    private final String release;
    private final String delete;
    private final String purge;

    DeadLetterDialect(QualifiedName table) {
        this.letters = table.quoted();
        this.tableName = table.name();
        this.schema = table.quotedSchema().orElseThrow();
        this.selectByObject = SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}}
                 WHERE object_name = :name
                 ORDER BY {{order}}""").with("columns", COLUMNS).with("letters", letters)
                .with("order", VERSION_ORDER).render();
        this.selectByDestination = SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}}
                 WHERE object_name = :name AND destination = :destination
                 ORDER BY {{order}}""").with("columns", COLUMNS).with("letters", letters)
                .with("order", VERSION_ORDER).render();
        this.selectById = SqlTemplate.of("""
                SELECT {{columns}}
                  FROM {{letters}}
                 WHERE id = :id""").with("columns", COLUMNS).with("letters", letters).render();
        this.updateFailures = SqlTemplate.of("""
                UPDATE {{letters}}
                   SET attempts = :attempts,
                       failures = {{failures}},
                       first_failed_at = :firstFailedAt,
                       last_failed_at = :lastFailedAt
                 WHERE id = :id""").with("letters", letters).with("failures", json("failures")).render();
        // Only the claimant may record its replay's failure: a claim that expired and was taken over is not its own.
        this.updateFailuresAndRelease = SqlTemplate.of("""
                UPDATE {{letters}}
                   SET attempts = :attempts,
                       failures = {{failures}},
                       first_failed_at = :firstFailedAt,
                       last_failed_at = :lastFailedAt,
                       claimed_by = NULL,
                       claimed_until = NULL
                 WHERE id = :id AND claimed_by = :claimant""").with("letters", letters)
                .with("failures", json("failures")).render();
        this.resolveClaimed = SqlTemplate.of("""
                DELETE FROM {{letters}}
                 WHERE id = :id AND claimed_by = :claimant""").with("letters", letters).render();
        this.resolveByKey = SqlTemplate.of("""
                DELETE FROM {{letters}}
                 WHERE object_name = :name AND destination = :destination AND idempotency_key = :key""")
                .with("letters", letters).render();
        this.release = SqlTemplate.of("""
                UPDATE {{letters}}
                   SET claimed_by = NULL,
                       claimed_until = NULL
                 WHERE id = :id AND claimed_by = :claimant""").with("letters", letters).render();
        this.delete = SqlTemplate.of("""
                DELETE FROM {{letters}}
                 WHERE id = :id""").with("letters", letters).render();
        this.purge = SqlTemplate.of("""
                DELETE FROM {{letters}}
                 WHERE last_failed_at < :olderThan""").with("letters", letters).render();
    }

    /** A JSON-typed parameter as the database wants it bound. */
    protected abstract String json(String parameter);

    /** The table's DDL and its indexes, for the store's script. */
    public abstract String script();

    /**
     * Creates the table if missing, or upgrades a table created by an earlier Tidemark, inside the caller's
     * transaction (which holds the store's creation lock).
     */
    abstract void createOrUpgrade(Connection c) throws SQLException;

    /** The statements that bring a table created by an earlier Tidemark to the current layout. */
    abstract DeadLetterUpgrade.Steps upgradeSteps();

    /** Whether the table exists with the layout of an earlier Tidemark (no idempotency key): it needs the upgrade. */
    public abstract boolean needsUpgrade(Connection c) throws SQLException;

    /** Inserts a letter unless one for its page exists; returns its id (PostgreSQL: no row when one existed). */
    public abstract String insert();

    /** The letter for {@code :name}, {@code :destination}, {@code :key}, locked until the transaction ends. */
    public abstract String selectPageForUpdate();

    /** The letter {@code :id} if {@code :claimant} holds it, locked until the transaction ends. */
    public abstract String selectClaimedForUpdate();

    /** Claims {@code :id} as {@code :claimant} until {@code :until} unless a live claim holds it; returns it. */
    public abstract String claimOne();

    /**
     * Locks every letter of {@code :name} and {@code :destination} for the transaction, waiting for concurrent
     * claims to commit, so that {@link #claimNext()} (the next statement) sees them.
     */
    public abstract String lockDestination();

    /**
     * Claims up to {@code :limit} free letters of {@code :name} and {@code :destination} in version order as
     * {@code :claimant}, unless another claimant's claim on one of them is live at {@code :now}; returns them.
     */
    public abstract String claimNext();

    public final String selectByObject() {
        return selectByObject;
    }

    public final String selectByDestination() {
        return selectByDestination;
    }

    public final String selectById() {
        return selectById;
    }

    public final String updateFailures() {
        return updateFailures;
    }

    public final String updateFailuresAndRelease() {
        return updateFailuresAndRelease;
    }

    public final String resolveClaimed() {
        return resolveClaimed;
    }

    public final String resolveByKey() {
        return resolveByKey;
    }

    public final String release() {
        return release;
    }

    public final String delete() {
        return delete;
    }

    public final String purge() {
        return purge;
    }

    /** {@link #COLUMNS}, each prefixed (for {@code OUTPUT inserted.x} or a table alias). */
    static String columns(String prefix) {
        return Arrays.stream(COLUMNS.split(", ")).map(c -> prefix + c).collect(Collectors.joining(", "));
    }

    /** An index name derived from the table's, cut to the database's limit. */
    static String indexName(String table, String suffix, int max) {
        String name = table + suffix;
        return name.length() <= max ? name : name.substring(0, max - suffix.length()) + suffix;
    }
}
