package io.tidemark.postgres.internal.logical;

import com.fasterxml.jackson.core.JsonFactory;
import io.tidemark.postgres.internal.logical.PgOutput.Begin;
import io.tidemark.postgres.internal.logical.PgOutput.Commit;
import io.tidemark.postgres.internal.logical.PgOutput.Delete;
import io.tidemark.postgres.internal.logical.PgOutput.Insert;
import io.tidemark.postgres.internal.logical.PgOutput.Message;
import io.tidemark.postgres.internal.logical.PgOutput.Relation;
import io.tidemark.postgres.internal.logical.PgOutput.Truncate;
import io.tidemark.postgres.internal.logical.PgOutput.Tuple;
import io.tidemark.postgres.internal.logical.PgOutput.Update;
import io.tidemark.sync.internal.jdbc.Jdbc;
import io.tidemark.sync.internal.sql.PgName;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongUnaryOperator;

/**
 * Streams one logical replication slot with {@code pgoutput} over PostgreSQL's replication protocol, on a thread of
 * its own, into a {@link TableLog} per captured table: each transaction's changes are appended at its commit, with the
 * end of its commit record as their version, so versions rise in commit order and a transaction is never split.
 *
 * <p>The slot only moves forward when the stream confirms a position: the lowest watermark the table logs' readers
 * have stored ({@code acknowledged}), never more, so after a crash or a reconnect the server streams again from
 * there and nothing a reader has not stored is lost. Transactions the stream had already decoded are recognised by
 * their version and skipped.
 *
 * <p>The position ({@link #position()}) is how far the stream has decoded: every transaction that ends at or below it
 * is in the table logs. Between transactions it also moves with the server's keepalives, which report how far the
 * server has decoded, so a table nobody writes to can still store a moving watermark and let the slot advance.
 */
public final class SlotStream implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SlotStream.class);
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    private static final int RECENT_COMMITS = 65_536;

    /** How the stream connects, what it reads and how it acknowledges. */
    public record Settings(String jdbcUrl, Properties properties, String slot, String publication,
                           Duration statusInterval, Duration acknowledgeEvery, int maxBufferedChanges,
                           long maxBufferedBytes, int maxTransactionChanges, long maxTransactionBytes) {
    }

    private final Settings settings;
    private final Map<PgName, TableLog> logs;
    private final Consumer<PgName> committed;
    private final LongUnaryOperator acknowledged;
    private final ElementRenderer renderer = new ElementRenderer(new JsonFactory());
    private final Map<Integer, Relation> relations = new HashMap<>();
    /** Per relation, how each column's values are written, resolved from its types once per relation message. */
    private final Map<Integer, ValueType[]> columnTypes = new HashMap<>();
    /** The captured tables' column types, read at each connect: a type changed meanwhile is read again. */
    private PgTypes types = PgTypes.BUILT_IN;
    /** Per relation, the positions of its primary key's columns (none without a primary key), from its message. */
    private final Map<Integer, int[]> keyColumns = new HashMap<>();
    /**
     * The primary key's columns of each captured table that has one. The stream flags the replica identity's
     * columns as the key, which under {@code REPLICA IDENTITY FULL} is every column: a key change is told by the
     * primary key, where there is one.
     */
    private Map<PgName, Set<String>> primaryKeys = Map.of();
    /**
     * The captured tables by oid, as resolved at connect: the stream names a table by oid (its relation id), and
     * a table renamed or moved to another schema while it is captured keeps its oid and its changes.
     */
    private Map<Integer, PgName> tablesByOid = Map.of();
    private final Thread thread;

    private volatile long position;
    private volatile boolean connected;
    private volatile String lastError;
    private volatile boolean closing;

    /**
     * Whether the logs hold {@code maxBufferedChanges} or {@code maxBufferedBytes} or more: counted where it changes
     * (a commit appends, an acknowledgement releases), not at every message.
     */
    private boolean full;

    // The transaction being decoded: its id, its changes by table, and its truncates.
    private boolean inTransaction;
    private int xid;
    /** The commits decoded lately, by transaction id: for an export to tell a commit not yet visible. */
    private final Map<Integer, Long> recentCommits = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Long> eldest) {
            return size() > RECENT_COMMITS;
        }
    };
    /** The changes of the transaction being decoded, until its commit. */
    private final HeldTransaction transaction;

    /**
     * @param logs         the table logs by table
     * @param committed    told each table a commit touched, after its changes are in the log
     * @param acknowledged given the stream's position, the position every reader has stored, which the slot may
     *                     move to (and up to which the logs may release)
     */
    public SlotStream(Settings settings, Map<PgName, TableLog> logs, Consumer<PgName> committed,
                      LongUnaryOperator acknowledged) {
        this.settings = settings;
        this.logs = Map.copyOf(logs);
        this.committed = committed;
        this.acknowledged = acknowledged;
        this.transaction = new HeldTransaction(settings.maxTransactionChanges(), settings.maxTransactionBytes());
        this.thread = new Thread(this::run, "tidemark-slot-" + settings.slot());
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** How far the stream has decoded; every transaction ending at or below it is in the table logs. */
    public long position() {
        return position;
    }

    /**
     * Whether a transaction the stream decoded lately, with a commit ending at or below {@code position}, has an id
     * (its 32 low bits) that {@code matches}.
     */
    public boolean anyDecodedCommit(long position, java.util.function.IntPredicate matches) {
        synchronized (recentCommits) {
            for (Map.Entry<Integer, Long> commit : recentCommits.entrySet()) {
                if (commit.getValue() <= position && matches.test(commit.getKey())) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Whether the stream is connected now. */
    public boolean connected() {
        return connected;
    }

    /** Why the stream last failed, or null. */
    public String lastError() {
        return lastError;
    }

    /** Whether the logs hold {@code maxBufferedChanges} changes or {@code maxBufferedBytes} of them, or more. */
    private boolean full() {
        int changes = 0;
        long bytes = 0;
        for (TableLog log : logs.values()) {
            changes += log.size();
            bytes += log.bytes();
        }
        return changes >= settings.maxBufferedChanges() || bytes >= settings.maxBufferedBytes();
    }

    private void run() {
        long backoffMillis = 250;
        while (!closing) {
            try {
                stream();
                backoffMillis = 250;
            } catch (Throwable e) {
                // Errors too (an OutOfMemoryError decoding a huge transaction): a thread that died would leave the
                // provider answering "nothing new" for ever. The stream starts again from the slot's position.
                connected = false;
                if (closing) {
                    return;
                }
                lastError = describe(e);
                LOG.warn("Logical replication slot {}: {}; reconnecting in {} ms", settings.slot(), lastError,
                        backoffMillis);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(backoffMillis));
                backoffMillis = Math.min(backoffMillis * 2, MAX_BACKOFF.toMillis());
            }
        }
    }

    private void stream() throws SQLException {
        Properties props = new Properties();
        props.putAll(settings.properties());
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        try (Connection connection = DriverManager.getConnection(settings.jdbcUrl(), props)) {
            long confirmed = confirmedPosition(connection);
            if (tablesByOid.isEmpty()) {
                // By name once, at the first connect; then by oid, so that a table renamed while captured keeps its
                // changes across reconnects.
                tablesByOid = tablesByOid(connection);
            }
            requirePublished(connection);
            primaryKeys = primaryKeys(connection);
            types = PgTypes.load(connection, tablesByOid.keySet());
            // Nothing at or below the slot's position will be streamed again: a reader asking from below it would
            // get a gap, so the logs refuse it (and the provider exports the table whole instead).
            for (TableLog log : logs.values()) {
                log.release(confirmed);
            }
            PGReplicationStream stream = connection.unwrap(PGConnection.class).getReplicationAPI()
                    .replicationStream().logical()
                    .withSlotName(settings.slot())
                    .withSlotOption("proto_version", "1")
                    .withSlotOption("publication_names", settings.publication())
                    .withStatusInterval((int) settings.statusInterval().toMillis(), TimeUnit.MILLISECONDS)
                    .start();
            // Known only now that the stream runs: a slot still held by a stream that is going away refuses to start.
            position = Math.max(position, confirmed);
            connected = true;
            lastError = null;
            inTransaction = false;
            relationsOnReconnect();
            long nextAcknowledge = 0;
            try {
                while (!closing) {
                    long now = System.nanoTime();
                    if (now >= nextAcknowledge) {
                        acknowledge(stream);
                        nextAcknowledge = now + settings.acknowledgeEvery().toNanos();
                    }
                    if (full) {
                        // Readers are behind: stop reading, so that the server keeps the WAL rather than this
                        // process the changes. Acknowledge often, so that reading resumes as soon as they catch up.
                        waitForReaders(stream);
                        nextAcknowledge = 0;
                        continue;
                    }
                    ByteBuffer message = stream.readPending();
                    if (message == null) {
                        if (!inTransaction) {
                            position = Math.max(position, stream.getLastReceiveLSN().asLong());
                        }
                        LockSupport.parkNanos(IDLE_PARK_NANOS);
                        continue;
                    }
                    handle(PgOutput.parse(message));
                }
            } finally {
                connected = false;
                stream.close();
            }
        }
    }

    /** Where the slot stands: the stream starts there, and nothing at or below it will be streamed again. */
    private long confirmedPosition(Connection replication) throws SQLException {
        // A replication connection runs simple queries: read the slot through it rather than open another.
        List<String> confirmed = Jdbc.query(replication, "SELECT confirmed_flush_lsn::text"
                + " FROM pg_catalog.pg_replication_slots WHERE slot_name = ?", rs -> rs.getString(1), settings.slot());
        if (confirmed.isEmpty()) {
            throw new SQLException("the replication slot " + settings.slot() + " does not exist; install"
                    + " the capture first (PostgresLogicalCapture.install)", "42704");
        }
        return confirmed.get(0) == null ? 0 : LogSequenceNumber.valueOf(confirmed.get(0)).asLong();
    }

    private Map<Integer, PgName> tablesByOid(Connection replication) throws SQLException {
        Map<Integer, PgName> byOid = new HashMap<>();
        for (PgName table : logs.keySet()) {
            List<Integer> oid = Jdbc.query(replication, """
                    SELECT c.oid::int4 FROM pg_catalog.pg_class c
                      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = ? AND c.relname = ?""", rs -> rs.getInt(1),
                    table.schema().orElseThrow(), table.name());
            if (oid.isEmpty()) {
                throw new SQLException("the captured table " + table.quoted() + " does not exist (renamed or dropped"
                        + " while the provider was stopped?): capture it under its new name", "42P01");
            }
            byOid.put(oid.get(0), table);
        }
        return byOid;
    }

    /**
     * Every captured table is still in the publication: a table dropped (and perhaps created again under its name)
     * is not, and its changes would never come. Fails, naming it, rather than answer "nothing new".
     */
    private void requirePublished(Connection replication) throws SQLException {
        Set<Integer> published = new HashSet<>(Jdbc.query(replication, "SELECT (pg_catalog.quote_ident(schemaname)"
                + " || '.' || pg_catalog.quote_ident(tablename))::regclass::oid::int4"
                + " FROM pg_catalog.pg_publication_tables WHERE pubname = ?", rs -> rs.getInt(1),
                settings.publication()));
        for (Map.Entry<Integer, PgName> table : tablesByOid.entrySet()) {
            if (!published.contains(table.getKey())) {
                throw new SQLException("the captured table " + table.getValue().quoted() + " (oid " + table.getKey() + ") is"
                        + " no longer in the publication " + settings.publication() + ": it was dropped, or removed"
                        + " from the publication. Install the capture again and reset its objects", "55000");
            }
        }
    }

    private Map<PgName, Set<String>> primaryKeys(Connection replication) throws SQLException {
        Map<PgName, Set<String>> keys = new HashMap<>();
        for (String[] column : Jdbc.query(replication, """
                SELECT i.indrelid::int4::text, a.attname
                  FROM pg_catalog.pg_index i
                  JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                 WHERE i.indisprimary""", rs -> new String[] {rs.getString(1), rs.getString(2)})) {
            PgName table = tablesByOid.get(Integer.parseInt(column[0]));
            if (table != null) {
                keys.computeIfAbsent(table, t -> new HashSet<>()).add(column[1]);
            }
        }
        return keys;
    }


    /**
     * The column types read again, on a connection of their own (the replication connection is streaming): a
     * relation message names a type they lack, after a column was added. A failure keeps the types known, and the
     * column is written as text until the next connect.
     */
    private PgTypes typesReadAgain() {
        try (Connection plain = DriverManager.getConnection(settings.jdbcUrl(), settings.properties())) {
            return PgTypes.load(plain, tablesByOid.keySet());
        } catch (SQLException e) {
            LOG.warn("Could not read the column types of the tables of slot {} again; a column of a new type is"
                    + " written as text until the stream reconnects: {}", settings.slot(), e.toString());
            return types;
        }
    }

    private void relationsOnReconnect() {
        // A new stream sends every relation again before its first change; those of the old one may be stale.
        relations.clear();
        keyColumns.clear();
        columnTypes.clear();
        transaction.clear();
    }

    private void acknowledge(PGReplicationStream stream) {
        long ack = Math.min(acknowledged.applyAsLong(position), position);
        full = full(); // the logs released what the readers stored
        if (ack > 0) {
            LogSequenceNumber lsn = LogSequenceNumber.valueOf(ack);
            stream.setFlushedLSN(lsn);
            stream.setAppliedLSN(lsn);
        }
    }

    private void waitForReaders(PGReplicationStream stream) throws SQLException {
        acknowledge(stream);
        stream.forceUpdateStatus();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
    }

    private void handle(Message message) {
        if (message instanceof Begin b) {
            inTransaction = true;
            xid = b.xid();
            transaction.clear();
        } else if (message instanceof Relation r) {
            relations.put(r.id(), r);
            keyColumns.put(r.id(), keyColumns(r));
            if (!r.columns().stream().allMatch(c -> types.knows(c.typeOid()))) {
                types = typesReadAgain();
            }
            columnTypes.put(r.id(), r.columns().stream().map(c -> types.resolve(c.typeOid()))
                    .toArray(ValueType[]::new));
        } else if (message instanceof Insert i) {
            add(i.relation(), 'I', i.row(), null, false, false);
        } else if (message instanceof Update u) {
            update(u);
        } else if (message instanceof Delete d) {
            add(d.relation(), 'D', d.old(), null, d.oldIsKey(), false);
        } else if (message instanceof Truncate t) {
            truncate(t);
        } else if (message instanceof Commit c) {
            commit(c);
        }
        // Anything else (origin, type and logical messages) holds nothing to capture.
    }

    private void truncate(Truncate t) {
        for (int id : t.relations()) {
            PgName table = tablesByOid.get(id);
            if (table != null) {
                transaction.truncate(table);
            }
        }
    }

    /**
     * An update, or, when its key changed, the delete of the old key followed by the insert of the new row (as
     * the outbox records it), so that a consumer keyed by the table's key never keeps the old one.
     */
    private void update(Update u) {
        Tuple old = u.oldIsKey() ? null : u.old();
        if (u.old() != null && keyChanged(u.relation(), u.old(), u.row())) {
            add(u.relation(), 'D', u.old(), null, u.oldIsKey(), false);
            // The new row takes the large values the update left alone from the old row, where the WAL has it.
            add(u.relation(), 'I', u.row(), old, false, false);
            return;
        }
        add(u.relation(), 'U', u.row(), old, false, true);
    }

    /**
     * Whether the primary key changed: compared on the primary key's columns (the stream flags every column as
     * part of the key under {@code REPLICA IDENTITY FULL}). A table without a primary key (captured with
     * {@code REPLICA IDENTITY FULL}) has no key to change: its updates stay updates.
     */
    private boolean keyChanged(int relationId, Tuple old, Tuple row) {
        for (int i : keyColumns.get(relationId)) {
            if (i >= row.size() || old.kind(i) == PgOutput.UNCHANGED_TOAST || row.kind(i) == PgOutput.UNCHANGED_TOAST) {
                continue;
            }
            if (old.kind(i) != row.kind(i) || !Arrays.equals(old.value(i), row.value(i))) {
                return true;
            }
        }
        return false;
    }

    private int[] keyColumns(Relation relation) {
        Set<String> primaryKey = primaryKeys.getOrDefault(tablesByOid.get(relation.id()), Set.of());
        return java.util.stream.IntStream.range(0, relation.columns().size())
                .filter(i -> primaryKey.contains(relation.columns().get(i).name())).toArray();
    }

    private void add(int relationId, char operation, Tuple row, Tuple old, boolean keyOnly, boolean update) {
        PgName table = tablesByOid.get(relationId);
        if (table != null) {
            transaction.add(table, new HeldTransaction.Decoded(operation, relation(relationId),
                    columnTypes.get(relationId), row, old, keyOnly, update));
        }
    }

    private void commit(Commit c) {
        inTransaction = false;
        long version = c.endLsn();
        if (version <= position) {
            // Streamed again after a reconnect: already in the logs.
            transaction.clear();
            return;
        }
        // Rendered first; then the logs change, each table's in one step; then the position moves. So a reader
        // never sees a truncate without the rows its transaction wrote after it, nor a table's floor above the
        // position for longer than the appends take, and is never answered "nothing new up to this version" for a
        // table whose changes at it were let go.
        Map<PgName, List<byte[]>> rendered = new LinkedHashMap<>();
        for (PgName table : transaction.tables()) {
            rendered.put(table, render(transaction.take(table), version));
        }
        List<PgName> touched = new ArrayList<>();
        for (PgName table : transaction.truncated()) {
            List<byte[]> after = rendered.remove(table);
            logs.get(table).appendTruncate(version, after == null ? List.of() : after);
            touched.add(table);
        }
        rendered.forEach((table, elements) -> {
            logs.get(table).append(elements, version);
            touched.add(table);
        });
        for (PgName table : transaction.letGo()) {
            logs.get(table).dropThrough(version);
            touched.add(table);
        }
        List<PgName> letGo = List.copyOf(transaction.letGo());
        transaction.clear();
        synchronized (recentCommits) {
            recentCommits.put(xid, version);
        }
        position = version;
        full = full();
        if (!letGo.isEmpty()) {
            LOG.warn("Logical replication slot {}: transaction {}, committed at {}, changed more than the provider"
                    + " holds for one transaction ({} changes or {} bytes of rows, maxTransactionChanges and"
                    + " maxTransactionBytes); its changes of {} were let go, and their readers below it get those"
                    + " tables whole", settings.slot(), Integer.toUnsignedString(xid),
                    LogSequenceNumber.valueOf(version), settings.maxTransactionChanges(),
                    settings.maxTransactionBytes(), letGo.stream().map(PgName::quoted).toList());
        }
        for (PgName table : touched) {
            committed.accept(table);
        }
    }

    private List<byte[]> render(List<HeldTransaction.Decoded> changes, long version) {
        List<byte[]> elements = new ArrayList<>(changes.size());
        for (HeldTransaction.Decoded d : changes) {
            List<String> changed = d.update() ? ElementRenderer.changed(d.relation(), d.old(), d.row()) : null;
            elements.add(renderer.render(d.operation(), version, d.relation(), d.types(), d.row(), d.keyOnly(),
                    changed, d.old()));
        }
        return elements;
    }

    private Relation relation(int id) {
        Relation relation = relations.get(id);
        if (relation == null) {
            throw new IllegalStateException("pgoutput sent a change of relation " + id + " before describing it");
        }
        return relation;
    }


    private static String describe(Throwable e) {
        String message = e.getMessage();
        return message == null || e instanceof Error ? e.toString() : message;
    }

    @Override
    public void close() {
        closing = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
