package io.tidemark.postgres.internal.logical;

import io.tidemark.postgres.PostgresLogicalCapture;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The decoded, committed changes of one table that no reader has acknowledged yet, in commit order. The stream
 * appends a transaction's changes at its commit; readers take pages from any position at or above the floor; the
 * floor moves up when every object reading the table has stored a watermark past it.
 *
 * <p>A TRUNCATE is kept as a marker at its transaction's version: a page never crosses it, and a page starting at
 * it holds the truncate and what its transaction did to the table after it, the table as it stood at that version.
 *
 * <p>A transaction too large to hold ({@link #dropThrough}) raises the floor past itself instead: a reader below
 * it is refused ({@link Released}) and gets the table whole, which holds what that transaction wrote.
 */
public final class TableLog {

    /** One change: its version (the end of its transaction's commit record) and its element, or a truncate. */
    private record Entry(long version, byte[] element) {
        boolean truncate() {
            return element == null;
        }
    }

    /**
     * What a read returns: the elements (empty when nothing is new), the highest version among them, whether the
     * page starts with a truncate (its elements are then what the truncating transaction did after it), and whether
     * more changes follow.
     */
    public record Page(List<byte[]> elements, long lastVersion, boolean truncate, boolean more) {
    }

    /**
     * A read from below the floor: the changes it asks for are no longer held. {@code reasonCode} says why, for
     * the {@code Full} answer that replaces them: the readers stored past them, or a transaction was too large.
     */
    public static final class Released extends IllegalStateException {

        private final int reasonCode;

        Released(String message, int reasonCode) {
            super(message);
            this.reasonCode = reasonCode;
        }

        public int reasonCode() {
            return reasonCode;
        }
    }

    private final ArrayDeque<Entry> entries = new ArrayDeque<>();
    /** The bytes of the elements held. */
    private long bytes;
    private long floor;
    private int floorReason = PostgresLogicalCapture.AGED_OUT_REASON_CODE;

    synchronized void append(List<byte[]> elements, long version) {
        for (byte[] element : elements) {
            entries.addLast(new Entry(version, element));
            bytes += element.length;
        }
    }

    /** A truncate and what its transaction wrote to the table after it, in one step: never one without the other. */
    synchronized void appendTruncate(long version, List<byte[]> after) {
        entries.addLast(new Entry(version, null));
        append(after, version);
    }

    /**
     * The changes after {@code fromVersion}, at most about {@code maxRows} of them: a page is cut only between
     * versions (a transaction is never split) and never across a truncate. Fails ({@link Released}) when changes
     * after {@code fromVersion} are no longer held: they would be skipped.
     */
    public synchronized Page read(long fromVersion, int maxRows) {
        if (fromVersion < floor) {
            throw new Released("the changes after version " + fromVersion + " were released " + (floorReason
                    == PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE
                    ? "because the transaction committed at version " + floor + " changed more of the table's rows"
                            + " than the provider holds (maxTransactionChanges, maxTransactionBytes)"
                    : "when the table's readers had stored version " + floor), floorReason);
        }
        List<byte[]> page = new ArrayList<>();
        long last = -1;
        Iterator<Entry> it = entries.iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (e.version() <= fromVersion) {
                continue;
            }
            if (e.truncate()) {
                if (!page.isEmpty()) {
                    return new Page(page, last, false, true);
                }
                // The truncate and what its own transaction did to the table after it: the table as it stood
                // at that version, from empty.
                long version = e.version();
                List<byte[]> after = new ArrayList<>();
                while (it.hasNext()) {
                    Entry next = it.next();
                    if (next.version() != version) {
                        return new Page(after, version, true, true);
                    }
                    if (!next.truncate()) {
                        after.add(next.element());
                    }
                }
                return new Page(after, version, true, false);
            }
            if (page.size() >= maxRows && e.version() != last) {
                return new Page(page, last, false, true);
            }
            page.add(e.element());
            last = e.version();
        }
        return new Page(page, last, false, false);
    }

    /** Forgets every change at or below {@code version}, which every reader of the table has stored. */
    synchronized void release(long version) {
        raiseFloor(version, PostgresLogicalCapture.AGED_OUT_REASON_CODE);
    }

    /**
     * Forgets every change at or below {@code version}, the version of a transaction whose changes of this table were
     * too many to hold and were not kept: a reader below it gets the table whole, exported after it.
     */
    synchronized void dropThrough(long version) {
        raiseFloor(version, PostgresLogicalCapture.OVERSIZED_TRANSACTION_REASON_CODE);
    }

    private void raiseFloor(long version, int reason) {
        while (!entries.isEmpty() && entries.peekFirst().version() <= version) {
            Entry gone = entries.removeFirst();
            bytes -= gone.truncate() ? 0 : gone.element().length;
        }
        if (version > floor) {
            floor = version;
            floorReason = reason;
        }
    }

    /** The version at or below which changes were released. */
    synchronized long floor() {
        return floor;
    }

    synchronized int size() {
        return entries.size();
    }

    /** The bytes of the changes held. */
    synchronized long bytes() {
        return bytes;
    }
}
