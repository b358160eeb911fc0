package io.tidemark.postgres;

import io.tidemark.postgres.internal.logical.LogicalSetup;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Log-based capture: PostgreSQL's own logical decoding reads the tables' changes from the write-ahead log, so the
 * application's writes carry no trigger, no outbox row and no notification. A publication names the tables, a
 * logical replication slot keeps the WAL until every reader has stored its watermark, and
 * {@link PostgresLogicalProvider} streams the slot with the built-in {@code pgoutput} plugin and answers the engine
 * as a change function would.
 *
 * <pre>{@code
 * PostgresLogicalCapture capture = PostgresLogicalCapture.forTables("public.items", "public.orders")
 *         .slot("tidemark_shop").build();
 * capture.install(adminDataSource);          // or hand capture.script() to a DBA
 * PostgresLogicalProvider provider = PostgresLogicalProvider.builder(capture)
 *         .connect(jdbcUrl, user, password).watermarks(store).build();
 * SyncEngine.builder().provider(provider).watermarks(store)
 *         .track(capture.track("Items", "public.items")) ...
 * }</pre>
 *
 * <p><b>What it needs.</b> {@code wal_level = logical} on the server (a restart), a role with the {@code REPLICATION}
 * attribute for the slot and the stream (not a superuser), ownership of the tables for the publication, and a
 * replica identity on every table (a primary key, or {@code REPLICA IDENTITY FULL}): without one PostgreSQL refuses
 * updates and deletes on a published table, so {@link #install} refuses such a table first.
 *
 * <p><b>What a reader receives.</b> Every committed change in commit order, each transaction whole, with the end
 * of its commit record as {@code $version}; an insert and an update carry the whole new row, a delete the key (the
 * whole old row with {@link Builder#oldRows(boolean) oldRows}). {@code $changed} needs the old row, so it comes with
 * {@code oldRows(true)}, which sets {@code REPLICA IDENTITY FULL} on the tables (more WAL per update and delete). A
 * key update arrives as the delete of the old key and the insert of the new row. A {@code TRUNCATE} arrives as an
 * answer of type {@code Full} without rows and with {@code ReasonCode} {@value #TRUNCATE_REASON_CODE}: the table
 * was empty at that version.
 *
 * <p><b>A table whole.</b> The first cycle of an {@link InitialSync#FULL} object, and a reader whose position the
 * provider no longer holds, get the table's rows in one snapshot as a {@code Full} answer, at a version from which
 * the changes that follow continue it: a change may come again after the export, none is missed. So do the readers
 * of a table that one transaction changed too many rows of to hold in memory ({@value
 * #OVERSIZED_TRANSACTION_REASON_CODE}).
 */
public final class PostgresLogicalCapture {

    /** The slot's and the publication's name unless configured. */
    public static final String DEFAULT_SLOT = "tidemark";

    /** The {@code ReasonCode} of the {@code Full} answer that reports a {@code TRUNCATE}. */
    public static final int TRUNCATE_REASON_CODE = 2;

    /**
     * The {@code ReasonCode} of the {@code Full} answer to a reader whose position the provider no longer holds (as
     * the outbox answers a reader older than its trim).
     */
    public static final int AGED_OUT_REASON_CODE = 1;

    /**
     * The {@code ReasonCode} of the {@code Full} answer that replaces the changes of a transaction too large for the
     * provider to hold in memory ({@code PostgresLogicalProvider.Builder.maxTransactionChanges}): the table whole,
     * exported after that transaction.
     */
    public static final int OVERSIZED_TRANSACTION_REASON_CODE = 3;

    private final List<PgName> tables;
    private final String slot;
    private final String publication;
    private final boolean oldRows;

    private PostgresLogicalCapture(Builder b, List<PgName> tables) {
        this.tables = List.copyOf(tables);
        this.slot = b.slot;
        this.publication = b.publication == null ? b.slot : b.publication;
        this.oldRows = b.oldRows;
    }

    /** The tables to capture, optionally schema-qualified ({@code public} otherwise). */
    public static Builder forTables(String... tables) {
        return new Builder(tables == null ? List.of() : List.of(tables));
    }

    /** The replication slot's name. */
    public String slot() {
        return slot;
    }

    /** The publication's name. */
    public String publication() {
        return publication;
    }

    /** The captured tables, schema-qualified and quoted. */
    public List<String> tables() {
        List<String> names = new ArrayList<>();
        for (PgName t : tables) {
            names.add(t.quoted());
        }
        return names;
    }

    /** Whether the tables log whole old rows ({@code REPLICA IDENTITY FULL}), for {@code $changed}. */
    public boolean oldRows() {
        return oldRows;
    }

    /**
     * A tracked object reading {@code table}'s changes; with the engine's default {@link InitialSync#FULL} its first
     * cycle exports the table whole, with {@link InitialSync#INCREMENTAL} it records where the stream stands.
     */
    public TrackedObject track(String objectName, String table) {
        return TrackedObject.of(objectName, resolve(table).quoted());
    }

    /** As {@link #track(String, String)}, for a capture of one table. */
    public TrackedObject track(String objectName) {
        if (tables.size() != 1) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "the logical capture " + slot + " has "
                    + tables.size() + " tables; name the table: track(objectName, table)");
        }
        return track(objectName, tables.get(0).quoted());
    }

    /**
     * The SQL that installs the capture, for a DBA to review and run: the replica identities (with
     * {@code oldRows}), the publication and the slot. Run it as a role that owns the tables and has the
     * {@code REPLICATION} attribute, outside a transaction block (a slot cannot be created in a transaction that has
     * written).
     */
    public String script() {
        return LogicalSetup.script(this, tables);
    }

    /**
     * Checks the server and the tables, then creates what is missing: the replica identities (with
     * {@code oldRows}), the publication or the tables it lacks, the slot. Fails before any change with
     * {@link ErrorCode#LOGICAL_DECODING_DISABLED} when {@code wal_level} is not {@code logical}, and
     * {@link ErrorCode#SCHEMA_UNSUPPORTED} for a table without a replica identity or a slot of another plugin.
     * Idempotent.
     */
    public void install(DataSource dataSource) {
        LogicalSetup.install(this, tables, dataSource);
    }

    /**
     * Drops the slot (the server then frees the WAL it kept) and the publication. Readers lose their position: a
     * later install starts a new stream, and tracked objects must be reset. Fails while a stream is connected.
     */
    public void uninstall(DataSource dataSource) {
        LogicalSetup.uninstall(this, dataSource);
    }

    /** The table a tracked object reads, as configured here, or null when it is not one of the tables. */
    PgName tableOf(TrackedObject object) {
        PgName name = resolve(object.procedure());
        return tables.contains(name) ? name : null;
    }

    List<PgName> tableNames() {
        return tables;
    }

    private static PgName resolve(String table) {
        return PgName.parse(table, "table").withDefaultSchema("public");
    }

    @Override
    public String toString() {
        return "PostgresLogicalCapture[slot=" + slot + ", publication=" + publication + ", tables=" + tables() + "]";
    }

    /** Collects the settings; {@link #build()} checks them all at once. */
    public static final class Builder {

        private final List<String> tables;
        private String slot = DEFAULT_SLOT;
        private String publication;
        private boolean oldRows;

        private Builder(List<String> tables) {
            this.tables = tables;
        }

        /**
         * The replication slot; default {@value #DEFAULT_SLOT}. One slot per capture: the readers of one slot share
         * its WAL.
         */
        public Builder slot(String name) {
            this.slot = name;
            return this;
        }

        /** The publication; default the slot's name. */
        public Builder publication(String name) {
            this.publication = name;
            return this;
        }

        /**
         * Log whole old rows ({@code REPLICA IDENTITY FULL}, set by {@link #install}): updates then carry
         * {@code $changed} and deletes the whole old row, at the price of the old row's bytes in the WAL of every
         * update and delete. Default false: the key alone, as PostgreSQL logs it for a primary key.
         */
        public Builder oldRows(boolean enabled) {
            this.oldRows = enabled;
            return this;
        }

        public PostgresLogicalCapture build() {
            if (tables.isEmpty()) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION,
                        "a logical capture needs at least one table: forTables(\"public.items\")");
            }
            Set<PgName> names = new LinkedHashSet<>();
            for (String table : tables) {
                if (!names.add(resolve(table))) {
                    throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "the table " + table
                            + " is named twice in the logical capture");
                }
            }
            // Slot names are narrower than identifiers: lower-case letters, digits and underscores only.
            if (slot == null || !slot.matches("[a-z0-9_]{1,63}")) {
                throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "the replication slot name " + slot
                        + " is not valid: use 1 to 63 lower-case letters, digits and underscores");
            }
            // The stream names the publication in a replication command, where PostgreSQL folds it to lower case.
            if (publication != null && !publication.matches("[a-z0-9_]{1,63}")) {
                throw new TidemarkException(ErrorCode.INVALID_IDENTIFIER, "the publication name " + publication
                        + " is not valid: use 1 to 63 lower-case letters, digits and underscores");
            }
            return new PostgresLogicalCapture(this, new ArrayList<>(names));
        }
    }
}
