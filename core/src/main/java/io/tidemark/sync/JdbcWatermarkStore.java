package io.tidemark.sync;

import io.tidemark.sync.internal.store.JdbcStore;
import io.tidemark.sync.internal.store.JdbcStoreSupport;
import io.tidemark.sync.internal.store.StoreDialect;
import io.tidemark.sync.internal.store.WatermarkConflicts;
import io.tidemark.sync.spi.DestinationPosition;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkState;
import io.tidemark.sync.spi.WatermarkStore;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.StatementContext;

import javax.sql.DataSource;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

/**
 * Keeps watermarks in a table of the database ({@code tidemark.sync_state} by default), created on first use
 * unless told otherwise. Each version is stored with the identity of the procedure that produced it
 * ({@code source_identity}); a table created by an older version of Tidemark gains that column on first use, and
 * its rows, which have no identity yet, adopt the current one at their object's next successful cycle.
 *
 * <p>Next to it, {@code tidemark.sync_state_positions} (the state table's name followed by {@code _positions})
 * keeps one position per destination of an object; the object's watermark is the lowest of them, and both are
 * written together, all or nothing: on PostgreSQL in one statement, else (and for a first position or a fenced
 * write) in one transaction. A store created before positions were kept gains that table on first use; its
 * objects have no position rows, which the engine reads as "every destination at the object's watermark".
 * Every version write is compare-and-set, so two engines sharing the tables can never move a watermark or a
 * position backwards or overwrite each other's progress.
 *
 * <pre>{@code
 * WatermarkStore store = JdbcWatermarkStore.create(dataSource);
 * WatermarkStore custom = JdbcWatermarkStore.builder(dataSource).schema("ops").createTables(false).build();
 * }</pre>
 *
 * <p>The role needs SELECT, INSERT and UPDATE on the table, and, to create it, CREATE on the schema (or on the
 * database, if the schema does not exist). {@link #script()} prints the DDL for a DBA to run instead.
 */
public final class JdbcWatermarkStore implements WatermarkStore, JdbcStore {

    private static final RowMapper<WatermarkState> STATE = (rs, ctx) -> {
        long version = rs.getLong("version");
        Long boxed = rs.wasNull() ? null : version;
        return new WatermarkState(rs.getString("object_name"), boxed, rs.getBoolean("paused"),
                instant(rs.getObject("last_moved_at", OffsetDateTime.class)),
                instant(rs.getObject("last_polled_at", OffsetDateTime.class)),
                rs.getString("last_error"), rs.getString("source_identity"));
    };

    private static final RowMapper<DestinationPosition> POSITION = (rs, ctx) -> {
        long version = rs.getLong("version");
        Long boxed = rs.wasNull() ? null : version;
        return new DestinationPosition(rs.getString("object_name"), rs.getString("destination"), boxed,
                rs.getBoolean("paused"));
    };

    private final JdbcStoreSupport support;

    private JdbcWatermarkStore(JdbcStoreSupport support) {
        this.support = support;
    }

    /** A store in schema {@code tidemark}, creating its tables if they are missing. */
    public static JdbcWatermarkStore create(DataSource dataSource) {
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

    /** The DDL this store runs (or expects) for its tables, formatted for review. */
    public String script() {
        return support.dialect().createScript();
    }

    /** Connects and reads the table: a closed port is {@code CONNECTION_FAILED}, a missing table {@code STORE_FAILED}. */
    @Override
    public List<CheckReport.Problem> check() {
        return support.check("watermark store", support.dialect().selectState());
    }

    /**
     * Read at the start of every cycle of the object. Where the dialect has it, one statement (PostgreSQL), else
     * the object's row and its positions in one transaction.
     */
    @Override
    public Optional<WatermarkState> load(String objectName) {
        try {
            Optional<String> combined = support.dialect().selectStateWithPositions();
            if (combined.isPresent()) {
                return support.jdbi().withHandle(h -> loadInOneStatement(h, combined.get(), objectName));
            }
            return support.jdbi().inTransaction(h -> {
                Optional<WatermarkState> state = h.createQuery(support.dialect().selectState())
                        .bind("name", objectName)
                        .map(STATE)
                        .findOne();
                Map<String, DestinationPosition> positions = new TreeMap<>();
                h.createQuery(support.dialect().selectPositions())
                        .bind("name", objectName)
                        .map(POSITION)
                        .forEach(p -> positions.put(p.destination(), p));
                return withPositions(objectName, state, positions);
            });
        } catch (JdbiException e) {
            throw support.failure("read the watermark", objectName, e);
        }
    }

    /** {@link StoreDialect#selectStateWithPositions()}: the object's columns on every row, a position on each. */
    private static Optional<WatermarkState> loadInOneStatement(Handle h, String sql, String objectName) {
        Optional<WatermarkState> state = Optional.empty();
        Map<String, DestinationPosition> positions = new TreeMap<>();
        for (StateAndPosition row : h.createQuery(sql).bind("name", objectName)
                .map((rs, ctx) -> stateAndPosition(rs, ctx, objectName)).list()) {
            if (state.isEmpty() && row.state() != null) {
                state = Optional.of(row.state());
            }
            if (row.position() != null) {
                positions.put(row.position().destination(), row.position());
            }
        }
        return withPositions(objectName, state, positions);
    }

    private static Optional<WatermarkState> withPositions(String objectName, Optional<WatermarkState> state,
                                                          Map<String, DestinationPosition> positions) {
        if (state.isEmpty() && !positions.isEmpty()) {
            // Only a destination was paused so far: the object has no row of its own yet.
            return Optional.of(new WatermarkState(objectName, null, false, null, null, null, null, positions));
        }
        return state.map(s -> s.withPositions(positions));
    }

    private static StateAndPosition stateAndPosition(ResultSet rs, StatementContext ctx,
                                                     String objectName) throws SQLException {
        WatermarkState state = rs.getString("object_name") == null ? null : STATE.map(rs, ctx);
        String destination = rs.getString("destination");
        if (destination == null) {
            return new StateAndPosition(state, null);
        }
        long version = rs.getLong("position_version");
        Long boxed = rs.wasNull() ? null : version;
        return new StateAndPosition(state, new DestinationPosition(objectName, destination, boxed,
                rs.getBoolean("position_paused")));
    }

    /** One row of {@link StoreDialect#selectStateWithPositions()}: either part may be null. */
    private record StateAndPosition(WatermarkState state, DestinationPosition position) {
    }

    @Override
    public Map<String, WatermarkState> loadAll() {
        try {
            Map<String, WatermarkState> all = new LinkedHashMap<>();
            Map<String, Map<String, DestinationPosition>> positions = new HashMap<>();
            support.jdbi().useTransaction(h -> {
                h.createQuery(support.dialect().selectAllStates())
                        .map(STATE)
                        .forEach(s -> all.put(s.objectName(), s));
                h.createQuery(support.dialect().selectAllPositions())
                        .map(POSITION)
                        .forEach(p -> positions.computeIfAbsent(p.objectName(), n -> new TreeMap<>())
                                .put(p.destination(), p));
            });
            positions.forEach((name, byDestination) -> all.merge(name,
                    new WatermarkState(name, null, false, null, null, null, null, byDestination),
                    (state, onlyPositions) -> state.withPositions(byDestination)));
            return all;
        } catch (JdbiException e) {
            throw support.failure("read the watermarks", "*", e);
        }
    }

    @Override
    public void advance(String objectName, String source, OptionalLong expected, long newVersion,
                        List<PositionAdvance> positions, Instant at) {
        WatermarkConflicts.checkNotBackwards(objectName, expected, newVersion);
        WatermarkConflicts.requireSource(objectName, source);
        positions.forEach(p -> WatermarkConflicts.checkPositionNotBackwards(objectName, p));
        // Locked in destination order, then the object's row, in either way of writing: two writers of the same
        // object wait for each other, never deadlock.
        List<PositionAdvance> inLockOrder = positions.stream()
                .sorted(Comparator.comparing(PositionAdvance::destination)).toList();
        boolean advanced;
        try {
            if (advancedInOneStatement(objectName, source, expected, newVersion, inLockOrder, at)) {
                return;
            }
            // Refused, or not a write one statement takes: one transaction writes it (the positions and the
            // watermark, their lowest, never disagree), or refuses it and says why.
            advanced = support.jdbi().inTransaction(h -> {
                support.fence(h, objectName);
                for (PositionAdvance position : inLockOrder) {
                    if (advancePosition(h, objectName, position, at) != 1) {
                        throw WatermarkConflicts.positionConflict(objectName, position,
                                heldPosition(h, objectName, position.destination()));
                    }
                }
                int updated = advanceWatermark(h, objectName, source, expected, newVersion, at);
                if (updated != 1) {
                    h.rollback();
                    return false;
                }
                return true;
            });
        } catch (JdbiException e) {
            throw support.failure("store the watermark " + newVersion, objectName, e);
        }
        if (!advanced) {
            throw WatermarkConflicts.explain(objectName, source, expected, newVersion, load(objectName));
        }
    }

    /**
     * {@link StoreDialect#advanceInOneStatement()}, where the dialect has it and the write is one it takes: a move
     * from a stored watermark, of positions already stored, not fenced by a lease (the fence runs in the write's
     * transaction). Whether it wrote; false also when it wrote nothing because something was not as expected.
     */
    private boolean advancedInOneStatement(String objectName, String source, OptionalLong expected, long newVersion,
                                           List<PositionAdvance> positions, Instant at) {
        Optional<String> sql = support.dialect().advanceInOneStatement();
        if (sql.isEmpty() || expected.isEmpty() || support.fenced(objectName)
                || positions.stream().anyMatch(p -> p.expected().isEmpty())) {
            return false;
        }
        List<String> destinations = positions.stream().map(PositionAdvance::destination).toList();
        if (Set.copyOf(destinations).size() != destinations.size()) {
            return false; // a destination twice: the transaction refuses the second move
        }
        Optional<Long> moved = support.jdbi().withHandle(h -> h.createQuery(sql.get())
                .bind("name", objectName)
                .bind("version", newVersion)
                .bind("expected", expected.getAsLong())
                .bind("source", source)
                .bind("at", timestamp(at))
                .bindArray("destinations", String.class, destinations)
                .bindArray("expectedPositions", Long.class,
                        positions.stream().map(p -> p.expected().getAsLong()).toList())
                .bindArray("positionVersions", Long.class,
                        positions.stream().map(PositionAdvance::version).toList())
                .bind("positionCount", positions.size())
                .mapTo(Long.class)
                .findOne());
        if (moved.isPresent() && moved.get() != positions.size()) {
            // Cannot happen: the statement writes only when it locked every position, each matching. Reached, it
            // is a bug, and the write has committed (there is no transaction to roll back): said loudly, not hidden.
            throw new TidemarkException(ErrorCode.INTERNAL, objectName + ": the store moved " + moved.get()
                    + " of " + positions.size() + " positions with the watermark " + newVersion);
        }
        return moved.isPresent();
    }

    private int advancePosition(Handle h, String objectName, PositionAdvance position, Instant at) {
        if (position.expected().isEmpty()) {
            return h.createUpdate(support.dialect().insertPosition())
                    .bind("name", objectName)
                    .bind("destination", position.destination())
                    .bind("version", position.version())
                    .bind("at", timestamp(at))
                    .execute();
        }
        return h.createUpdate(support.dialect().advancePosition())
                .bind("name", objectName)
                .bind("destination", position.destination())
                .bind("version", position.version())
                .bind("expected", position.expected().getAsLong())
                .bind("at", timestamp(at))
                .execute();
    }

    private OptionalLong heldPosition(Handle h, String objectName, String destination) {
        return h.createQuery(support.dialect().selectPositions())
                .bind("name", objectName)
                .map(POSITION)
                .stream()
                .filter(p -> p.destination().equals(destination))
                .findFirst()
                .map(DestinationPosition::position)
                .orElse(OptionalLong.empty());
    }

    private int advanceWatermark(Handle h, String objectName, String source, OptionalLong expected,
                                 long newVersion, Instant at) {
        if (expected.isEmpty()) {
            return h.createUpdate(support.dialect().advanceFromNothing())
                    .bind("name", objectName)
                    .bind("version", newVersion)
                    .bind("source", source)
                    .bind("at", timestamp(at))
                    .execute();
        }
        return h.createUpdate(support.dialect().advanceFrom())
                .bind("name", objectName)
                .bind("version", newVersion)
                .bind("expected", expected.getAsLong())
                .bind("source", source)
                .bind("at", timestamp(at))
                .execute();
    }

    @Override
    public void setDestinationPaused(String objectName, String destination, boolean paused, Instant at) {
        execute(paused ? "pause destination '" + destination + "'" : "resume destination '" + destination + "'",
                objectName, h -> h.createUpdate(support.dialect().setDestinationPaused())
                        .bind("name", objectName)
                        .bind("destination", destination)
                        .bind("paused", paused)
                        .bind("at", timestamp(at))
                        .execute());
    }

    @Override
    public void adoptSource(String objectName, String source, Instant at) {
        WatermarkConflicts.requireSource(objectName, source);
        execute("adopt the watermark for " + source, objectName, h -> h.createUpdate(support.dialect().adoptSource())
                .bind("name", objectName)
                .bind("source", source)
                .bind("at", timestamp(at))
                .execute());
    }

    @Override
    public void recordPoll(String objectName, Instant at, String error) {
        org.jdbi.v3.core.HandleConsumer<RuntimeException> record = h -> h.createUpdate(support.dialect().recordPoll())
                .bind("name", objectName)
                .bind("at", timestamp(at))
                .bindBySqlType("error", error, java.sql.Types.VARCHAR)
                .execute();
        if (!support.fenced(objectName)) {
            execute("record the poll", objectName, record);
            return;
        }
        try {
            support.jdbi().useTransaction(h -> {
                support.fence(h, objectName);
                record.useHandle(h);
            });
        } catch (JdbiException e) {
            throw support.failure("record the poll", objectName, e);
        }
    }

    @Override
    public void setPaused(String objectName, boolean paused, Instant at) {
        execute(paused ? "pause the object" : "resume the object", objectName,
                h -> h.createUpdate(support.dialect().setPaused())
                        .bind("name", objectName)
                        .bind("paused", paused)
                        .bind("at", timestamp(at))
                        .execute());
    }

    @Override
    public void reset(String objectName, Instant at) {
        try {
            // Positions first, then the object's row: the order every advance locks them in, so that a reset and
            // an advance running together wait for each other instead of deadlocking.
            support.jdbi().useTransaction(h -> {
                h.createUpdate(support.dialect().resetPositions())
                        .bind("name", objectName)
                        .bind("at", timestamp(at))
                        .execute();
                h.createUpdate(support.dialect().reset())
                        .bind("name", objectName)
                        .bind("at", timestamp(at))
                        .execute();
            });
        } catch (JdbiException e) {
            throw support.failure("reset the watermark", objectName, e);
        }
    }

    private void execute(String what, String objectName, org.jdbi.v3.core.HandleConsumer<RuntimeException> work) {
        try {
            support.jdbi().useHandle(work);
        } catch (JdbiException e) {
            throw support.failure(what, objectName, e);
        }
    }

    static OffsetDateTime timestamp(Instant at) {
        return OffsetDateTime.ofInstant(Objects.requireNonNull(at, "at"), ZoneOffset.UTC);
    }

    static Instant instant(OffsetDateTime value) {
        return value == null ? null : value.toInstant();
    }

    /** Configures a {@link JdbcWatermarkStore}. */
    public static final class Builder {
        private final DataSource dataSource;
        private String schema = JdbcStoreSupport.DEFAULT_SCHEMA;
        private String table = JdbcStoreSupport.DEFAULT_STATE_TABLE;
        private String deadLetterTable = JdbcStoreSupport.DEFAULT_DEAD_LETTER_TABLE;
        private boolean createTables = true;

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /** The schema of the store's tables; default {@code tidemark}. */
        public Builder schema(String schema) {
            this.schema = schema;
            return this;
        }

        /** The watermark table; default {@code sync_state}. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** The dead-letter table created next to it; default {@code dead_letters}. */
        public Builder deadLetterTable(String table) {
            this.deadLetterTable = table;
            return this;
        }

        /**
         * Whether to create missing tables at {@link #build()}, and add columns that tables created by an older
         * Tidemark lack; default true. With false, run {@link JdbcWatermarkStore#script()} first.
         */
        public Builder createTables(boolean createTables) {
            this.createTables = createTables;
            return this;
        }

        /**
         * Validates every setting at once (setters only store), connects once to detect the database, and
         * creates missing tables.
         */
        public JdbcWatermarkStore build() {
            return new JdbcWatermarkStore(new JdbcStoreSupport("JdbcWatermarkStore", dataSource, schema, table,
                    deadLetterTable, createTables));
        }
    }
}
