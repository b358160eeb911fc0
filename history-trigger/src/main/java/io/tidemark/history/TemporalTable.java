package io.tidemark.history;

import io.tidemark.history.internal.ddl.HistoryNames;
import io.tidemark.history.internal.ddl.Installer;
import io.tidemark.history.internal.maintenance.InvariantChecker;
import io.tidemark.history.internal.maintenance.Pruner;
import io.tidemark.history.internal.query.JdbcHistoryQueries;
import io.tidemark.history.internal.ddl.SchemaMaintenance;
import io.tidemark.history.internal.ddl.StorageMigration;
import io.tidemark.history.internal.context.SettingsPrefix;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Temporal history for one PostgreSQL table: a {@code <table>_history} table kept by a generated trigger, with
 * change context, schema evolution, point-in-time queries and retention.
 *
 * <pre>{@code
 * TemporalTable policies = TemporalTable.forTable("public.policies")
 *         .exclude("search_vector")
 *         .retention(Duration.ofDays(365 * 7))
 *         .build();
 * policies.install(dataSource);               // or policies.script(dataSource) for Flyway / Liquibase
 * policies.verify(dataSource).assertClean();  // drift: a column added by hand, a missing index, ...
 * }</pre>
 *
 * <p>Immutable and thread-safe; every operation takes the {@link DataSource} to run against. Column types, the
 * primary key and everything else about the table are read from the live catalog, so the generated SQL always
 * matches the table as it is.
 */
public final class TemporalTable {

    /** The settings prefix the trigger reads change context from, unless configured otherwise. */
    public static final String DEFAULT_SETTINGS_PREFIX = "tidemark";

    private final PgName table;
    private final PgName historyTable;
    private final Set<String> excludedColumns;
    private final boolean sessionUserColumn;
    private final boolean transactionIdColumn;
    private final Duration retention;
    private final String settingsPrefix;
    private final TruncatePolicy truncatePolicy;
    private final TriggerMode triggerMode;
    private final HistoryStorage storage;
    private final boolean periodIndex;
    private final String seedValidFromColumn;
    private final int pruneBatchSize;
    private final Clock clock;
    private final HistoryNames names;

    private TemporalTable(Builder b) {
        this.table = b.table;
        this.historyTable = b.historyTable;
        this.excludedColumns = Collections.unmodifiableSet(new LinkedHashSet<>(b.excluded));
        this.sessionUserColumn = b.sessionUserColumn;
        this.transactionIdColumn = b.transactionIdColumn;
        this.retention = b.retention;
        this.settingsPrefix = b.settingsPrefix;
        this.truncatePolicy = b.truncatePolicy;
        this.triggerMode = b.triggerMode;
        this.storage = b.storage;
        this.periodIndex = b.periodIndex;
        this.seedValidFromColumn = b.seedValidFrom;
        this.pruneBatchSize = b.pruneBatchSize;
        this.clock = b.clock;
        this.names = HistoryNames.of(table, historyTable, storage);
    }

    /**
     * Starts the configuration for {@code table} ({@code schema.table}; a name without schema means
     * {@code public}). Names are parsed like PostgreSQL does: unquoted parts fold to lower case.
     */
    public static Builder forTable(String table) {
        return new Builder(table);
    }

    // --- operations ---------------------------------------------------------------------------------------------

    /**
     * The complete installation as SQL, formatted and commented for review, to run as one transaction by Flyway,
     * Liquibase or {@code psql --single-transaction}. Reads the table's columns from the catalog of
     * {@code dataSource} (nothing is changed there). Running it has the same effect as {@link #install}.
     */
    public String script(DataSource dataSource) {
        return new Installer(this).script(dataSource);
    }

    /**
     * Creates the history table, its indexes, the trigger functions, the triggers and the {@code <table>_as_of}
     * function, seeds an open version for every existing row and registers the table, all in one transaction under
     * a lock that keeps writers out between the seed and the trigger. Idempotent: on a table that is already
     * installed it repairs drift the way {@link #evolve} does, and does nothing when there is none.
     */
    public InstallReport install(DataSource dataSource) {
        return new Installer(this).install(dataSource);
    }

    /**
     * {@link #install(DataSource)}, reporting the seed's progress: the existing rows are seeded in batches in
     * primary-key order, each batch reported to {@code progress}. The guarantees are those of
     * {@link #install(DataSource)}: one transaction, writers kept out from before the first batch until the trigger
     * is in place, so the history is the same as a single-statement seed writes.
     */
    public InstallReport install(DataSource dataSource, InstallProgress progress) {
        return new Installer(this).install(dataSource, Objects.requireNonNull(progress, "progress"));
    }

    /** Compares what is installed with what this configuration generates for the table as it is now. */
    public VerifyReport verify(DataSource dataSource) {
        return new SchemaMaintenance(this).verify(dataSource);
    }

    /**
     * Repairs drift: new table columns are added to history and the function regenerated; dropped columns stay in
     * history as nullable orphans; missing indexes, triggers and functions are re-created.
     *
     * @throws TidemarkException SCHEMA_CHANGE_REFUSED when a versioned column changed its type (nothing is changed)
     */
    public VerifyReport evolve(DataSource dataSource) {
        return new SchemaMaintenance(this).evolve(dataSource);
    }

    /**
     * Converts a history installed with {@link HistoryStorage#HISTORY_TABLE} to the configured
     * {@link HistoryStorage#CURRENT_IN_TABLE}, in one READ COMMITTED transaction that locks the table and its history
     * (readers and writers wait until it commits): the closed versions and tombstones move, with their
     * {@code history_id}, to {@code <history>_closed}; each open version's start and change context move into its row
     * (one UPDATE of every row, with the table's own UPDATE triggers paused for it); the history table is replaced by
     * the view of the same name, which keeps its {@code SELECT} grants; the triggers and functions of the new shape
     * are installed and the registry updated. An open version the new shape cannot present as it is (its earlier
     * versions pruned, or a value in a column no longer versioned) is closed at the migration instant and continued
     * by an identical current version. Refused, with nothing changed, when the history's open versions and the
     * table's rows do not pair up, something of the application's hangs on the history table, or a versioned column
     * changed type. Does nothing when the history is stored as configured already (also when another call migrated
     * it while this one waited for the lock). Configured with {@link HistoryStorage#HISTORY_TABLE}, it converts a
     * history stored as {@code CURRENT_IN_TABLE} back: one history table, every closed version with its
     * {@code history_id}, each row as its open version, the table's two columns dropped. See the History README,
     * "Migrating a history table".
     *
     * @throws TidemarkException SCHEMA_DRIFT when not installed or the history is inconsistent;
     *                           SCHEMA_CHANGE_REFUSED or SCHEMA_UNSUPPORTED as named in the message
     */
    public MigrationReport migrate(DataSource dataSource) {
        return new StorageMigration(this).migrate(dataSource);
    }

    /**
     * {@link #migrate} as SQL, formatted and commented for review, to run as one transaction by Flyway, Liquibase or
     * {@code psql --single-transaction}: the same statements in the same order, the consistency checks as a block
     * that raises an error. Generated from the catalog of {@code dataSource} as it is now (nothing is changed there):
     * the application's UPDATE triggers it pauses, the grants it moves and the orphan columns it keeps are named in
     * it, so generate it again after a schema change.
     *
     * @throws TidemarkException as {@link #migrate}, and INVALID_CONFIGURATION when stored as configured already
     */
    public String migrationScript(DataSource dataSource) {
        return new StorageMigration(this).script(dataSource);
    }

    /** Drops the triggers and generated functions and unregisters the table. The history table is kept. */
    public void uninstall(DataSource dataSource) {
        new SchemaMaintenance(this).uninstall(dataSource);
    }

    /**
     * Deletes closed versions that ended before {@code now - retention} (see {@link Builder#retention}), in
     * batches; open versions are never deleted.
     *
     * @throws TidemarkException INVALID_CONFIGURATION when no retention was configured
     */
    public PruneReport prune(DataSource dataSource) {
        if (retention == null) {
            throw TidemarkException.forObject(ErrorCode.INVALID_CONFIGURATION, table.toString(),
                    "no retention is configured; set TemporalTable.Builder.retention(...) or call prune(dataSource, cutoff)");
        }
        return prune(dataSource, clock.instant().minus(retention));
    }

    /**
     * Deletes closed versions whose period ended before {@code cutoff}, in batches of {@link Builder#pruneBatchSize},
     * each in its own transaction. The cutoff is recorded first as the retention horizon: an as-of query for an
     * earlier instant then fails with HISTORY_PRUNED instead of giving an incomplete answer.
     */
    public PruneReport prune(DataSource dataSource, Instant cutoff) {
        return new Pruner(this).prune(dataSource, Objects.requireNonNull(cutoff, "cutoff"));
    }

    /** Parameterised, read-only queries over the history table. */
    public HistoryQueries queries(DataSource dataSource) {
        return new JdbcHistoryQueries(this, dataSource);
    }

    /**
     * Checks the invariants of the history: no overlapping or negative periods, no gaps inside a chain, at most one
     * open version per key, an open version for every row and none for a row that is gone.
     */
    public List<InvariantViolation> checkInvariants(DataSource dataSource) {
        return new InvariantChecker(this).check(dataSource);
    }

    // --- configuration ------------------------------------------------------------------------------------------

    public TableName table() {
        return new TableName(table.schema().orElseThrow(), table.name());
    }

    /** The history table, {@code <table>_history} in the table's schema unless configured. */
    public TableName historyTable() {
        PgName history = names.historyTable();
        return new TableName(history.schema().orElseThrow(), history.name());
    }


    public Set<String> excludedColumns() {
        return excludedColumns;
    }

    public boolean sessionUserColumn() {
        return sessionUserColumn;
    }

    public boolean transactionIdColumn() {
        return transactionIdColumn;
    }

    public Optional<Duration> retention() {
        return Optional.ofNullable(retention);
    }

    public String settingsPrefix() {
        return settingsPrefix;
    }

    public TruncatePolicy truncatePolicy() {
        return truncatePolicy;
    }

    public TriggerMode triggerMode() {
        return triggerMode;
    }

    /** Where versions are kept; {@link HistoryStorage#HISTORY_TABLE} unless configured. */
    public HistoryStorage storage() {
        return storage;
    }

    public boolean periodIndex() {
        return periodIndex;
    }

    public Optional<String> seedValidFromColumn() {
        return Optional.ofNullable(seedValidFromColumn);
    }

    public int pruneBatchSize() {
        return pruneBatchSize;
    }

    public Clock clock() {
        return clock;
    }

    @Override
    public String toString() {
        return "TemporalTable[" + table + " -> " + names.historyTable() + "]";
    }

    /** Configures a {@link TemporalTable}; everything is checked at {@link #build()}. */
    public static final class Builder {
        private final String tableName;
        private String historyTableName;
        private final List<String> excludedNames = new ArrayList<>();
        /** Filled by {@link #build()} from the names above, checked. */
        private PgName table;
        private PgName historyTable;
        private final List<String> excluded = new ArrayList<>();
        private boolean sessionUserColumn;
        private boolean transactionIdColumn;
        private Duration retention;
        private String settingsPrefix = DEFAULT_SETTINGS_PREFIX;
        private TruncatePolicy truncatePolicy = TruncatePolicy.CLOSE_VERSIONS;
        private TriggerMode triggerMode = TriggerMode.ROW;
        private HistoryStorage storage = HistoryStorage.HISTORY_TABLE;
        private boolean periodIndex;
        private String seedValidFrom;
        private boolean seedValidFromSet;
        private int pruneBatchSize = 10_000;
        private Clock clock = Clock.systemUTC();

        private Builder(String table) {
            this.tableName = table;
        }

        /** The history table's name, {@code name} or {@code schema.name}; default {@code <table>_history}. */
        public Builder historyTable(String name) {
            this.historyTableName = name;
            return this;
        }

        /**
         * Columns kept out of history (large blobs, derived search vectors). Changing only excluded columns writes no
         * version. Primary-key columns cannot be excluded.
         */
        public Builder exclude(String... columns) {
            if (columns == null) {
                excludedNames.add(null);
            } else {
                excludedNames.addAll(Arrays.asList(columns));
            }
            return this;
        }

        /** Adds {@code db_session_user text DEFAULT session_user}: the login that made the change. */
        public Builder sessionUserColumn(boolean enabled) {
            this.sessionUserColumn = enabled;
            return this;
        }

        /** Adds {@code transaction_id xid8 DEFAULT pg_current_xact_id()}: the writing transaction. */
        public Builder transactionIdColumn(boolean enabled) {
            this.transactionIdColumn = enabled;
            return this;
        }

        /** How long closed versions are kept by {@link TemporalTable#prune(DataSource)}. */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /** Prefix of the settings the trigger reads context from ({@code <prefix>.changed_by}); default tidemark. */
        public Builder settingsPrefix(String prefix) {
            this.settingsPrefix = prefix;
            return this;
        }

        public Builder truncatePolicy(TruncatePolicy policy) {
            this.truncatePolicy = policy;
            return this;
        }

        /** Row triggers (default) or statement triggers with transition tables; see {@link TriggerMode}. */
        public Builder triggerMode(TriggerMode mode) {
            this.triggerMode = mode;
            return this;
        }

        /**
         * Where versions are kept: every version in {@code <table>_history} (the default), or the current one in the
         * table itself, which makes an INSERT write no history at all; see {@link HistoryStorage}.
         */
        public Builder storage(HistoryStorage storage) {
            this.storage = storage;
            return this;
        }

        /**
         * Whether to create the GiST index on {@code tstzrange(valid_from, valid_to)} that whole-table as-of snapshots
         * and window queries use. Off by default: measured, it more than doubles the cost of history writes (see the
         * README); turn it on where those queries run often. Per-key queries do not need it.
         */
        public Builder periodIndex(boolean enabled) {
            this.periodIndex = enabled;
            return this;
        }

        /**
         * At install, date each existing row's first version from this column (timestamptz, timestamp or date; NULL
         * falls back to the install instant) instead of the install instant.
         */
        public Builder seedValidFrom(String column) {
            this.seedValidFrom = column;
            this.seedValidFromSet = true;
            return this;
        }

        /** Rows deleted per transaction by prune; default 10,000. */
        public Builder pruneBatchSize(int rows) {
            this.pruneBatchSize = rows;
            return this;
        }

        /** The clock retention cutoffs are computed from; default UTC system clock. */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Checks every value at once (setters only store) and builds the definition; runs no SQL.
         *
         * @throws TidemarkException INVALID_CONFIGURATION listing every problem, naming the table and the fix
         */
        public TemporalTable build() {
            Checks checks = Checks.of("[" + tableName + "]");
            table = checks.valid(() -> PgName.parse(tableName, "table").withDefaultSchema("public"));
            historyTable = null;
            if (historyTableName != null && table != null) {
                historyTable = checks.valid(() -> PgName.parse(historyTableName, "history table")
                        .withDefaultSchema(table.schema().orElseThrow()));
            }
            excluded.clear();
            for (String column : excludedNames) {
                if (column == null) {
                    checks.add("exclude(...) names a null column");
                } else if (checks.valid(() -> PgName.checkPart(column, "excluded column")) != null) {
                    excluded.add(column);
                }
            }
            if (seedValidFromSet) {
                if (seedValidFrom == null) {
                    checks.add("seedValidFrom must not be null");
                } else {
                    checks.valid(() -> PgName.checkPart(seedValidFrom, "seed column"));
                }
            }
            String object = table == null ? tableName : table.toString();
            checks.valid(() -> SettingsPrefix.check(settingsPrefix, object));
            checks.that(retention == null || !(retention.isNegative() || retention.isZero()), "retention "
                    + retention + " must be positive; leave it unset to keep history for ever");
            checks.that(pruneBatchSize >= 1, "pruneBatchSize must be at least 1, was " + pruneBatchSize);
            checks.notNull("truncatePolicy", truncatePolicy);
            checks.notNull("triggerMode", triggerMode);
            checks.notNull("storage", storage);
            if (storage == HistoryStorage.CURRENT_IN_TABLE) {
                // The opt-in columns describe the writer of each version; in this shape the current version's writer
                // would need two more columns in the application's table. Not offered yet rather than half-done.
                checks.that(!sessionUserColumn && !transactionIdColumn, "sessionUserColumn and transactionIdColumn"
                        + " are not available with HistoryStorage.CURRENT_IN_TABLE yet; use HISTORY_TABLE for them");
            }
            checks.notNull("clock", clock);
            checks.that(new LinkedHashSet<>(excludedNames).size() == excludedNames.size(),
                    "a column is excluded twice: " + excludedNames);
            checks.throwIfAny();
            return new TemporalTable(this);
        }
    }
}
