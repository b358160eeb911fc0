package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.internal.logical.PgOutput.Relation;
import io.tidemark.postgres.internal.logical.PgOutput.Tuple;
import io.tidemark.sync.internal.sql.PgName;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The changes of the transaction being decoded, by table, held until its commit gives them their version (the end of
 * its commit record), within two limits: a number of changes and an estimate of the heap their decoded rows take.
 * The change that takes the transaction past either lets go of its table: what the transaction did to that table is
 * not kept from then on, and at the commit the table's log drops everything through it, so its readers get the table
 * whole after it. The tables written before keep their changes. Without the limits a statement of millions of rows
 * would run the process out of memory, and the stream, which decodes the same transaction again after every
 * reconnect, would never pass it.
 */
final class HeldTransaction {

    /** A change of the transaction, rendered at its commit, when its version is known. */
    record Decoded(char operation, Relation relation, ValueType[] types, Tuple row, Tuple old, boolean keyOnly,
                   boolean update) {
    }

    /** A held table's changes and the heap estimated for them. */
    private static final class Held {
        final List<Decoded> changes = new ArrayList<>();
        long bytes;
    }

    /** Per change, the objects around its rows (the change, its tuples and their arrays): an estimate. */
    private static final int CHANGE_OVERHEAD = 96;
    /** Per value, its array header and reference: an estimate. */
    private static final int VALUE_OVERHEAD = 24;

    private final int maxChanges;
    private final long maxBytes;
    private final Map<PgName, Held> held = new LinkedHashMap<>();
    private final List<PgName> truncated = new ArrayList<>();
    private final Set<PgName> letGo = new LinkedHashSet<>();
    private int changes;
    private long bytes;

    HeldTransaction(int maxChanges, long maxBytes) {
        this.maxChanges = maxChanges;
        this.maxBytes = maxBytes;
    }

    /** Holds {@code change} of {@code table}, unless the table was let go; lets it go if the change is one too many. */
    void add(PgName table, Decoded change) {
        if (letGo.contains(table)) {
            return;
        }
        Held h = held.computeIfAbsent(table, t -> new Held());
        long size = bytes(change.row()) + bytes(change.old()) + CHANGE_OVERHEAD;
        h.changes.add(change);
        h.bytes += size;
        changes++;
        bytes += size;
        if (changes > maxChanges || bytes > maxBytes) {
            release(table);
            truncated.remove(table); // the table whole replaces its truncate too
            letGo.add(table);
        }
    }

    /** The table was truncated: what the transaction did to it before is gone (and a table let go stays so). */
    void truncate(PgName table) {
        release(table);
        if (!letGo.contains(table) && !truncated.contains(table)) {
            truncated.add(table);
        }
    }

    /** The changes held, by table, in the order the tables were first written. */
    Map<PgName, List<Decoded>> changes() {
        Map<PgName, List<Decoded>> byTable = new LinkedHashMap<>();
        held.forEach((table, h) -> byTable.put(table, h.changes));
        return byTable;
    }

    /** The tables whose changes are held, in the order they were first written. */
    List<PgName> tables() {
        return List.copyOf(held.keySet());
    }

    /**
     * The changes held of {@code table}, no longer held: the commit renders one table after another, and each
     * table's decoded rows can go once its JSON is made.
     */
    List<Decoded> take(PgName table) {
        Held h = release(table);
        return h == null ? List.of() : h.changes;
    }

    /** The tables truncated, in order; never a table let go, which is read whole instead. */
    List<PgName> truncated() {
        return Collections.unmodifiableList(truncated);
    }

    /** The tables let go: none of their changes is held. */
    Set<PgName> letGo() {
        return Collections.unmodifiableSet(letGo);
    }

    /** How many changes are held now, all tables together. */
    int size() {
        return changes;
    }

    /** The heap estimated for the changes held now. */
    long bytes() {
        return bytes;
    }

    /** For the next transaction. */
    void clear() {
        held.clear();
        truncated.clear();
        letGo.clear();
        changes = 0;
        bytes = 0;
    }

    /** No longer holds {@code table}'s changes; what it held, or null. */
    private Held release(PgName table) {
        Held h = held.remove(table);
        if (h != null) {
            changes -= h.changes.size();
            bytes -= h.bytes;
        }
        return h;
    }

    /** A tuple's values and what surrounds each on the heap, estimated; 0 without a tuple. */
    private static long bytes(Tuple tuple) {
        if (tuple == null) {
            return 0;
        }
        long size = 0;
        for (int i = 0; i < tuple.size(); i++) {
            byte[] value = tuple.value(i);
            size += VALUE_OVERHEAD + (value == null ? 0 : value.length);
        }
        return size;
    }
}
