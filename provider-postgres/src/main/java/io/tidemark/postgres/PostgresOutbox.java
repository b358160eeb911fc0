package io.tidemark.postgres;

import io.tidemark.postgres.internal.FunctionNames;
import io.tidemark.postgres.internal.outbox.OutboxCatalog;
import io.tidemark.postgres.internal.outbox.OutboxColumn;
import io.tidemark.postgres.internal.outbox.OutboxHandOver;
import io.tidemark.postgres.internal.outbox.OutboxInstaller;
import io.tidemark.postgres.internal.outbox.OutboxMaintenance;
import io.tidemark.postgres.internal.outbox.OutboxNames;
import io.tidemark.postgres.internal.outbox.OutboxScript;
import io.tidemark.postgres.internal.outbox.OutboxShape;
import io.tidemark.postgres.internal.outbox.OutboxTrimmer;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.ObjectStatus;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Change capture for one PostgreSQL table that cannot lose a change: an outbox table fed by triggers, and the
 * change function Tidemark polls, gap-free by construction (see the script's header for why).
 *
 * <pre>{@code
 * PostgresOutbox outbox = PostgresOutbox.forTable("public.items").build();
 * outbox.install(dataSource);                 // idempotent, one transaction; or hand outbox.script(dataSource) to Flyway
 *                                             // (other options later: outbox.upgrade(dataSource), see differences)
 *
 * SyncEngine engine = SyncEngine.builder()
 *         .provider(PostgresProvider.create(dataSource))   // LISTENs for the outbox's notifications
 *         .watermarks(JdbcWatermarkStore.create(dataSource))
 *         .track(outbox.track("Items").initialSync(InitialSync.INCREMENTAL))
 *         .destination("search", batch -> index(batch))
 *         .build();
 *
 * outbox.trim(dataSource, engine);            // now and then: deletes what every reader has stored
 * }</pre>
 *
 * <p>Immutable and thread-safe; built by {@link #forTable(String)}, validated at {@link Builder#build()}.
 */
public final class PostgresOutbox {

    /** The channel the capture notifies and {@link PostgresProvider} listens on by default. */
    public static final String DEFAULT_CHANNEL = "tidemark";

    private final OutboxNames names;
    private final List<String> key;
    private final List<String> columns;
    private final Map<String, String> payloadKeys;
    private final TruncatePolicy truncate;
    private final CaptureShape capture;
    private final String channel;
    private final long trimMargin;
    private final int trimBatchSize;

    private PostgresOutbox(Builder b) {
        this.names = OutboxNames.of(b.table, b.outboxTable, b.changeFunction);
        this.key = b.key == null ? null : List.copyOf(b.key);
        this.columns = b.columns == null ? null : List.copyOf(b.columns);
        this.payloadKeys = Map.copyOf(b.payloadKeys);
        this.truncate = b.truncate;
        this.capture = b.capture;
        this.channel = b.notifications ? b.channel : null;
        this.trimMargin = b.trimMargin;
        this.trimBatchSize = b.trimBatchSize;
    }

    /** Starts configuring the outbox of {@code table}; an unqualified name means schema {@code public}. */
    public static Builder forTable(String table) {
        return new Builder(table);
    }

    /** The tracked table, schema-qualified, quoted where needed: {@code public.items}. */
    public String table() {
        return names.tableText();
    }

    /** The outbox table: {@code public.items_outbox} unless configured. */
    public String outboxTable() {
        return FunctionNames.text(names.outbox());
    }

    /**
     * The change function to track, schema-qualified and quoted where needed ({@code public.items_changes} unless
     * configured): pass it to {@link TrackedObject#of}, or use {@link #track(String)}.
     */
    public String changeFunction() {
        return FunctionNames.text(names.changeFunction());
    }

    /** The channel the capture notifies on commit; empty when notifications are off. */
    public Optional<String> notifyChannel() {
        return Optional.ofNullable(channel);
    }

    /** A tracked object reading this outbox: {@code TrackedObject.of(name, changeFunction()).table(outboxTable())}. */
    public TrackedObject track(String objectName) {
        return TrackedObject.of(objectName, changeFunction()).table(outboxTable());
    }

    /**
     * The SQL {@link #install} runs where no outbox is installed, generated from the declared key and columns alone
     * (no database needed), for review and for Flyway or Liquibase. Run it in one transaction at READ COMMITTED. It
     * records the options it installs; to change an installed outbox, see {@link #upgradeScript}.
     *
     * @throws TidemarkException {@code INVALID_CONFIGURATION} unless both {@link Builder#key} and
     *         {@link Builder#columns} were given; use {@link #script(DataSource)} to read them from the catalog
     */
    public String script() {
        if (key == null || columns == null) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "script() of the outbox of " + table()
                    + " needs the key and the captured columns: declare both with key(...) and columns(...), or"
                    + " call script(dataSource) to read them from the database");
        }
        return render(declaredShape());
    }

    /**
     * The SQL {@link #install} runs where no outbox is installed, with the key and columns read from the database
     * where not declared.
     */
    public String script(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            return resolveAndRender(connection);
        } catch (SQLException e) {
            throw OutboxInstaller.failure(dataSource, "read the shape of " + table(), e);
        }
    }

    /**
     * Creates the outbox, its triggers and functions in one transaction, and records the options it was installed
     * with. Idempotent: where this configuration is installed already it does nothing. It never changes an outbox
     * installed with other options (another payload key, column list, change function, ...; or a table that has
     * gained a column since, when every column is captured): it refuses and lists every difference, and
     * {@link #upgrade} makes the change. An outbox installed by an earlier version, which recorded nothing, is
     * adopted when it is exactly what this configuration generates.
     *
     * @throws TidemarkException {@code SCHEMA_DRIFT} listing every difference when another configuration is
     *         installed (nothing is changed); {@code SCHEMA_UNSUPPORTED} when the table is missing, has no usable key
     *         or lacks a column; {@code PERMISSION_DENIED} when the role may not create the objects
     */
    public void install(DataSource dataSource) {
        maintenance().install(dataSource);
    }

    /**
     * Makes the installed outbox this configuration, in one transaction under the outbox's lock: replaces the
     * functions, triggers and guard view, drops the change function and triggers the configuration no longer
     * generates, and records the new options. The changes already captured stay and keep the shape they were
     * captured with (a destination receives them as they were, then the new shape). Installs a fresh outbox when
     * there is none; does nothing when this configuration is installed.
     *
     * @return the differences found and resolved, as {@link #differences} would have listed them (one, "not
     *         installed", for a fresh outbox); empty when there was nothing to do
     * @throws TidemarkException {@code SCHEMA_CHANGE_REFUSED} when the outbox would have to move to another name
     *         or table (nothing is changed)
     */
    public List<OutboxDifference> upgrade(DataSource dataSource) {
        return maintenance().upgrade(dataSource);
    }

    /**
     * Every difference between the outbox installed in the database and this configuration; changes nothing.
     * Empty when {@link #install} would do nothing (or only record an outbox installed by an earlier version).
     */
    public List<OutboxDifference> differences(DataSource dataSource) {
        return maintenance().differences(dataSource);
    }

    /**
     * The SQL {@link #upgrade} would run on this database as it is now, for review and for a migration tool: the
     * differences as comments, the drops of what the configuration no longer generates, then the install script.
     */
    public String upgradeScript(DataSource dataSource) {
        return maintenance().upgradeScript(dataSource);
    }

    /**
     * A version at or above that of every change committed before this call. Once an object reading this outbox has
     * stored a watermark at or above it, it has delivered all of them: the point at which a table handed over to
     * another capture ({@link PostgresLogicalCapture}, seeded before this call) no longer needs the outbox. The
     * stored watermark passes it only when every transaction that was running at the call has ended (see the
     * README, <em>Switching a table from PostgresOutbox to log-based capture</em>). Reads no table.
     */
    public long committedVersion(DataSource dataSource) {
        return OutboxHandOver.committedVersion(dataSource, names);
    }

    /** Drops the triggers, functions and tables of the outbox (its captured changes with them). Idempotent. */
    public void uninstall(DataSource dataSource) {
        OutboxInstaller.uninstall(dataSource, names);
    }

    /**
     * Trims the outbox below the watermarks stored for the engine's objects that read it.
     *
     * @see #trim(DataSource, WatermarkStore, Collection)
     */
    public TrimResult trim(DataSource dataSource, SyncEngine engine) {
        Map<String, OptionalLong> stored = new LinkedHashMap<>();
        for (ObjectStatus status : engine.status()) {
            if (FunctionNames.calls(status.object(), names.changeFunction())) {
                stored.put(status.object().name(), status.stored().version());
            }
        }
        return trim(dataSource, stored);
    }

    /**
     * Deletes the changes every reader has stored, keeping {@link Builder#trimMargin} versions below the lowest
     * watermark, in batches of about {@link Builder#trimBatchSize} changes, each its own short transaction. Never
     * deletes at or above a stored watermark, nor anything the transaction horizon still holds back. Readers are
     * the objects whose procedure is this outbox's change function; one without a stored watermark does not need
     * old changes (its first cycle is a seed or a full snapshot). A reader that is not known here and falls
     * behind the trim gets a full snapshot with ReasonCode 1, never a diff with a hole.
     */
    public TrimResult trim(DataSource dataSource, WatermarkStore watermarks, Collection<TrackedObject> objects) {
        Map<String, OptionalLong> stored = new LinkedHashMap<>();
        Map<String, WatermarkState> all = watermarks.loadAll();
        for (TrackedObject object : objects) {
            if (FunctionNames.calls(object, names.changeFunction())) {
                WatermarkState state = all.get(object.name());
                stored.put(object.name(), state == null ? OptionalLong.empty() : state.version());
            }
        }
        return trim(dataSource, stored);
    }

    private TrimResult trim(DataSource dataSource, Map<String, OptionalLong> stored) {
        List<String> readers = List.copyOf(stored.keySet());
        if (readers.isEmpty()) {
            return TrimResult.skipped(readers, null, "no tracked object reads " + changeFunction());
        }
        OptionalLong lowest = stored.values().stream().filter(OptionalLong::isPresent)
                .mapToLong(OptionalLong::getAsLong).min();
        if (lowest.isEmpty()) {
            return TrimResult.skipped(readers, null, "no reader of " + changeFunction() + " has stored a watermark yet");
        }
        long through = lowest.getAsLong() - trimMargin;
        if (through <= 0) {
            return TrimResult.skipped(readers, lowest.getAsLong(), "the lowest watermark " + lowest.getAsLong()
                    + " is within the margin of " + trimMargin + " versions");
        }
        OutboxTrimmer.Outcome outcome = OutboxTrimmer.trim(dataSource, names, through, trimBatchSize);
        return TrimResult.trimmed(readers, lowest.getAsLong(), through, outcome.deleted(), outcome.batches());
    }

    private OutboxMaintenance maintenance() {
        return new OutboxMaintenance(names, connection -> new OutboxScript(names, resolve(connection), capture,
                truncate, channel));
    }

    private String resolveAndRender(Connection connection) throws SQLException {
        return render(resolve(connection));
    }

    private OutboxShape resolve(Connection connection) throws SQLException {
        return OutboxCatalog.resolve(connection, names.table(), key, columns, payloadKeys);
    }

    private String render(OutboxShape shape) {
        return new OutboxScript(names, shape, capture, truncate, channel).render();
    }

    /** The shape declared with key(...) and columns(...); checks it is consistent (duplicates, reserved keys). */
    private OutboxShape declaredShape() {
        return OutboxShape.of(OutboxColumn.list(key, payloadKeys), OutboxColumn.list(columns, payloadKeys));
    }

    @Override
    public String toString() {
        return "PostgresOutbox[" + table() + " -> " + outboxTable() + ", " + changeFunction() + "(json)]";
    }

    /** Configures a {@link PostgresOutbox}; everything is checked at {@link #build()}. */
    public static final class Builder {
        private final String table;
        private List<String> key;
        private List<String> columns;
        private final Map<String, String> payloadKeys = new LinkedHashMap<>();
        private String outboxTable;
        private String changeFunction;
        private TruncatePolicy truncate = TruncatePolicy.REFUSE;
        private CaptureShape capture = CaptureShape.FULL_IMAGE;
        private boolean notifications = true;
        private String channel = DEFAULT_CHANNEL;
        private long trimMargin = 10_000;
        private int trimBatchSize = 10_000;

        private Builder(String table) {
            this.table = table;
        }

        /**
         * The columns that identify a row (a delete carries only them). Default: the table's primary key, read
         * at install. Must be the primary key or a unique index over NOT NULL columns. Column names are taken as
         * stored in the catalog (case-sensitive, unquoted).
         */
        public Builder key(String... columns) {
            this.key = listOf(columns);
            return this;
        }

        /**
         * Captures only these columns (the key is always captured). Default: every column the table has at
         * install, virtual generated columns excepted.
         */
        public Builder columns(String... columns) {
            this.columns = listOf(columns);
            return this;
        }

        /**
         * The JSON key a column travels under, such as {@code "ItemCode"} for {@code item_code}; {@code $changed}
         * lists these keys too. Default: the column name.
         */
        public Builder payloadKey(String column, String key) {
            this.payloadKeys.put(column, key);
            return this;
        }

        /** The outbox table; default {@code <table>_outbox} in the table's schema. Other objects are named after it. */
        public Builder outboxTable(String name) {
            this.outboxTable = name;
            return this;
        }

        /** The change function; default {@code <table>_changes} in the table's schema. */
        public Builder changeFunction(String name) {
            this.changeFunction = name;
            return this;
        }

        /** What a TRUNCATE of the table does; default {@link TruncatePolicy#REFUSE}. */
        public Builder truncate(TruncatePolicy policy) {
            this.truncate = policy;
            return this;
        }

        /**
         * What the outbox records per change; default {@link CaptureShape#FULL_IMAGE} (the row as it was at each
         * change). {@link CaptureShape#KEYS} records only keys and delivers each changed row once per read, as it is
         * at read time: cheaper writes, no intermediate states (see the README, Capture shapes).
         */
        public Builder capture(CaptureShape shape) {
            this.capture = shape;
            return this;
        }

        /** The notification channel; default {@value PostgresOutbox#DEFAULT_CHANNEL}. */
        public Builder notifyChannel(String channel) {
            this.channel = channel;
            return this;
        }

        /**
         * Whether the capture notifies at all; default true: it notifies while a reader waits (the first capturing
         * writer after a reader armed the outbox's wake-up flag; see the README, Wake-up). Without it there is no flag
         * and no notification, and readers see changes at their poll interval.
         */
        public Builder notifications(boolean enabled) {
            this.notifications = enabled;
            return this;
        }

        /**
         * How many versions below the lowest stored watermark {@link PostgresOutbox#trim} keeps; default 10,000.
         * Versions are transaction ids, so this is a number of transactions.
         */
        public Builder trimMargin(long versions) {
            this.trimMargin = versions;
            return this;
        }

        /** About how many changes one trim transaction deletes; default 10,000. */
        public Builder trimBatchSize(int changes) {
            this.trimBatchSize = changes;
            return this;
        }

        /** Checks every value at once (setters only store) and builds the outbox; runs no SQL. */
        public PostgresOutbox build() {
            Checks checks = Checks.of("[outbox " + table + "]");
            checks.valid(() -> OutboxNames.of(table, outboxTable, changeFunction));
            checkColumnList(checks, "key", key);
            checkColumnList(checks, "columns", columns);
            checks.that(key == null || !key.isEmpty(), "key(...) needs at least one column");
            checks.that(columns == null || !columns.isEmpty(),
                    "columns(...) needs at least one column (the key is always captured)");
            for (Map.Entry<String, String> e : payloadKeys.entrySet()) {
                checkColumn(checks, "payloadKey", e.getKey());
                checkPayloadKey(checks, e.getValue());
                // With the key read from the catalog, the install checks that a renamed column is captured.
                checks.that(columns == null || key == null || columns.contains(e.getKey()) || key.contains(e.getKey()),
                        "payloadKey names column \"" + e.getKey() + "\", which is not captured");
            }
            checks.that(truncate != null, "truncate policy must not be null");
            checks.that(capture != null, "capture shape must not be null");
            if (notifications) {
                if (channel == null) {
                    checks.add("notifyChannel must not be null; use notifications(false) to turn them off");
                } else {
                    checks.valid(() -> PgName.checkPart(channel, "notification channel"));
                }
            }
            checks.that(trimMargin >= 0, "trimMargin must not be negative, got " + trimMargin);
            checks.atLeast("trimBatchSize", trimBatchSize, 1);
            checks.throwIfAny();
            PostgresOutbox outbox = new PostgresOutbox(this);
            if (outbox.key != null && outbox.columns != null) {
                outbox.declaredShape(); // the declared shape must be consistent (duplicate keys, ...)
            }
            return outbox;
        }

        /** A varargs argument as a list; a null array counts as one null name, reported by {@link #build()}. */
        private static List<String> listOf(String[] names) {
            return names == null ? Collections.singletonList(null) : Arrays.asList(names.clone());
        }

        private void checkColumnList(Checks checks, String what, List<String> names) {
            if (names == null) {
                return;
            }
            for (String name : names) {
                checkColumn(checks, what, name);
            }
            checks.that(names.stream().distinct().count() == names.size(),
                    what + "(...) names a column twice: " + names);
        }

        private void checkColumn(Checks checks, String what, String name) {
            if (name == null) {
                checks.add(what + " names a null column");
                return;
            }
            checks.valid(() -> PgName.checkPart(name, what + " column"));
            checkPayloadKey(checks, payloadKeys.getOrDefault(name, name));
        }

        private void checkPayloadKey(Checks checks, String key) {
            if (key == null) {
                checks.add("a payload key must not be null");
                return;
            }
            checks.valid(() -> PgName.checkPart(key, "payload key")); // a column alias: the 63-byte limit applies
            checks.that(!key.startsWith("$"), "payload key \"" + key + "\" starts with '$', which the contract"
                    + " reserves ($operation, $version, $changed); rename it with payloadKey(column, key)");
        }
    }
}
