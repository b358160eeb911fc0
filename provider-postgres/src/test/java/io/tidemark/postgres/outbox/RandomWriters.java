package io.tidemark.postgres.outbox;

import io.tidemark.sync.Change;

import javax.sql.DataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The writers of the randomised multi-writer tests, for every capture: random transactions on a table
 * {@code (id int PRIMARY KEY, tag text NOT NULL, n int NOT NULL)} (inserts, multi-row updates, deletes, key changes;
 * random size; some with a server-side pause; some rolled back on purpose, some by deadlocks and key conflicts), each
 * writer keeping a ledger of what it committed and rolled back, and the replay that turns delivered changes into the
 * table's state.
 */
public final class RandomWriters {

    /** Keys are drawn from {@code [0, KEYS)}. */
    public static final int KEYS = 2_000;

    private RandomWriters() {
    }

    /** Waits for every writer and adds their ledgers up. */
    public static Ledger collect(List<Future<Ledger>> writers) throws Exception {
        Ledger all = new Ledger();
        for (Future<Ledger> f : writers) {
            Ledger ledger = f.get(10, TimeUnit.MINUTES);
            all.committed.addAll(ledger.committed);
            all.rolledBack.addAll(ledger.rolledBack);
            all.commits += ledger.commits;
            all.rollbacks += ledger.rollbacks;
        }
        return all;
    }

    /** What one writer committed and what it rolled back. */
    public static final class Ledger {
        public final List<String> committed = new ArrayList<>();
        public final List<String> rolledBack = new ArrayList<>();
        public int commits;
        public int rollbacks;
    }

    /** One writer: random transactions until the shared budget is spent. */
    public static Ledger write(DataSource dataSource, String table, int writer, Random random, AtomicLong remaining)
            throws SQLException {
        Ledger ledger = new Ledger();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            long tx;
            while ((tx = remaining.getAndDecrement()) > 0) {
                List<String> changes = new ArrayList<>();
                boolean rollback = random.nextInt(10) == 0;
                try {
                    int statements = 1 + random.nextInt(3);
                    for (int s = 0; s < statements; s++) {
                        String tag = "w" + writer + "-t" + tx + "-s" + s;
                        statement(c, table, random, tag, changes);
                    }
                    if (random.nextInt(10) == 0) {
                        pause(c, random); // a longer transaction, holding the horizon for a while
                    }
                    if (rollback) {
                        c.rollback();
                    } else {
                        c.commit();
                    }
                } catch (SQLException e) {
                    // Deadlocks, key conflicts: the transaction is gone, and so are its changes.
                    if (!isConflict(e)) {
                        throw e;
                    }
                    c.rollback();
                    rollback = true;
                }
                if (rollback) {
                    ledger.rolledBack.addAll(changes);
                    ledger.rollbacks++;
                } else {
                    ledger.committed.addAll(changes);
                    ledger.commits++;
                }
            }
        }
        return ledger;
    }

    private static void statement(Connection c, String table, Random random, String tag, List<String> changes)
            throws SQLException {
        switch (random.nextInt(6)) {
            case 0, 1 -> { // insert 1..6 rows, skipping keys that exist
                Integer[] keys = keys(random, 1 + random.nextInt(6));
                try (PreparedStatement s = c.prepareStatement("INSERT INTO " + table
                        + " SELECT k, ?, 0 FROM unnest(?::int[]) k ON CONFLICT (id) DO NOTHING RETURNING id")) {
                    s.setString(1, tag);
                    s.setArray(2, array(c, keys));
                    forEach(s, (ResultSet rs) -> changes.add("I:" + rs.getInt(1) + ":" + tag));
                }
            }
            case 2, 3 -> { // update 1..12 rows
                Integer[] keys = keys(random, 1 + random.nextInt(12));
                try (PreparedStatement s = c.prepareStatement("UPDATE " + table
                        + " SET tag = ?, n = n + 1 WHERE id = ANY (?) RETURNING id")) {
                    s.setString(1, tag);
                    s.setArray(2, array(c, keys));
                    forEach(s, (ResultSet rs) -> changes.add("U:" + rs.getInt(1) + ":" + tag));
                }
            }
            case 4 -> { // delete 1..5 rows
                Integer[] keys = keys(random, 1 + random.nextInt(5));
                try (PreparedStatement s = c.prepareStatement("DELETE FROM " + table + " WHERE id = ANY (?) RETURNING id")) {
                    s.setArray(1, array(c, keys));
                    forEach(s, (ResultSet rs) -> changes.add("D:" + rs.getInt(1)));
                }
            }
            default -> { // move one row to a new key (a conflict rolls the transaction back)
                int from = random.nextInt(KEYS);
                int to = random.nextInt(KEYS);
                try (PreparedStatement s = c.prepareStatement("UPDATE " + table
                        + " SET id = ?, tag = ? WHERE id = ? AND id <> ? RETURNING id")) {
                    s.setInt(1, to);
                    s.setString(2, tag);
                    s.setInt(3, from);
                    s.setInt(4, to);
                    forEach(s, (ResultSet rs) -> {
                        changes.add("D:" + from);
                        changes.add("I:" + to + ":" + tag);
                    });
                }
            }
        }
    }

    /** A server-side pause of up to 5 ms inside the transaction. */
    private static void pause(Connection c, Random random) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("SELECT pg_sleep(?)")) {
            s.setDouble(1, random.nextInt(5) / 1000.0);
            s.execute();
        }
    }

    private static boolean isConflict(SQLException e) {
        String state = e.getSQLState();
        return "40P01".equals(state) || "23505".equals(state) || "40001".equals(state);
    }

    private static void forEach(PreparedStatement s, OutboxTables.RowHandler handler) throws SQLException {
        try (ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                handler.row(rs);
            }
        }
    }

    private static Integer[] keys(Random random, int count) {
        Integer[] keys = new Integer[count];
        for (int i = 0; i < count; i++) {
            keys[i] = random.nextInt(KEYS);
        }
        return keys;
    }

    private static Array array(Connection c, Integer[] keys) throws SQLException {
        return c.createArrayOf("int4", keys);
    }

    /** A change as the ledgers write it: {@code D:id}, or {@code I:id:tag} and {@code U:id:tag}. */
    public static String describe(Change change) {
        String op = change.operation().orElseThrow().code();
        int id = change.fields().get("id").asInt();
        return "D".equals(op) ? "D:" + id : op + ":" + id + ":" + change.fields().get("tag").asText();
    }

    /** Applies the changes in delivery order: the state a consumer mirroring the table ends with. */
    public static Map<Integer, String> replay(List<Change> changes) {
        Map<Integer, String> state = new HashMap<>();
        for (Change c : changes) {
            int id = c.fields().get("id").asInt();
            if (c.operation().orElseThrow() == io.tidemark.sync.Operation.DELETE) {
                state.remove(id);
            } else {
                state.put(id, c.fields().get("tag").asText());
            }
        }
        return new TreeMap<>(state);
    }

}
