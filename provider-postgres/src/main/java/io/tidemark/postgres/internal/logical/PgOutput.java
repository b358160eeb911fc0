package io.tidemark.postgres.internal.logical;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The messages of PostgreSQL's built-in logical decoding plugin {@code pgoutput}, protocol version 1 (PostgreSQL
 * 10 and later), as the replication stream delivers them: one message per buffer, its type in the first byte.
 * Only what a capture needs is kept; messages it has no use for (origin, type, logical messages) parse to
 * {@link Other}. Column values arrive in text form, as the server's output functions write them.
 */
public final class PgOutput {

    private PgOutput() {
    }

    /** One decoded message. */
    public sealed interface Message permits Begin, Commit, Relation, Insert, Update, Delete, Truncate, Other {
    }

    /** A transaction starts; its changes follow, then its {@link Commit}. */
    public record Begin(long finalLsn, int xid) implements Message {
    }

    /** The transaction ends: {@code endLsn} is the end of its commit record, where a reader resumes after it. */
    public record Commit(long commitLsn, long endLsn) implements Message {
    }

    /** A table's columns, sent before the first change of the table on a stream and again after it changes. */
    public record Relation(int id, String schema, String name, List<Column> columns) implements Message {
    }

    /** One column of a {@link Relation}: part of the replica identity (the key) or not, and its type. */
    public record Column(boolean key, String name, int typeOid) {
    }

    /** An inserted row. */
    public record Insert(int relation, Tuple row) implements Message {
    }

    /**
     * An updated row. {@code old} is the old key when the key changed ({@code oldIsKey}), the whole old row when
     * the table's replica identity is {@code FULL}, or null.
     */
    public record Update(int relation, Tuple old, boolean oldIsKey, Tuple row) implements Message {
    }

    /** A deleted row: its key, or its whole old row under replica identity {@code FULL} ({@code oldIsKey} false). */
    public record Delete(int relation, Tuple old, boolean oldIsKey) implements Message {
    }

    /** A TRUNCATE of one or more tables. */
    public record Truncate(int[] relations) implements Message {
    }

    /** A message a capture does not use. */
    public record Other(char type) implements Message {
    }

    /** The kinds of a column value in a tuple. */
    public static final byte NULL = 'n';
    public static final byte UNCHANGED_TOAST = 'u';
    public static final byte TEXT = 't';

    /**
     * A row's values, by column position: the kind of each ({@link #NULL}, {@link #UNCHANGED_TOAST} for a large
     * value the update did not touch and the WAL does not repeat, {@link #TEXT}) and the text of each text value.
     */
    public record Tuple(byte[] kinds, byte[][] values) {

        public int size() {
            return kinds.length;
        }

        /** The value's text as UTF-8 bytes; null for a NULL or an unchanged TOASTed value. */
        public byte[] value(int column) {
            return values[column];
        }

        public byte kind(int column) {
            return kinds[column];
        }
    }

    /** Parses one message; the buffer is positioned at its type byte and left at its end. */
    public static Message parse(ByteBuffer m) {
        char type = (char) m.get();
        return switch (type) {
            case 'B' -> {
                long finalLsn = m.getLong();
                m.getLong(); // commit time
                yield new Begin(finalLsn, m.getInt());
            }
            case 'C' -> {
                m.get(); // flags, unused
                long commitLsn = m.getLong();
                long endLsn = m.getLong();
                m.getLong(); // commit time
                yield new Commit(commitLsn, endLsn);
            }
            case 'R' -> relation(m);
            case 'I' -> {
                int relation = m.getInt();
                expect(m, 'N', "an insert's new row");
                yield new Insert(relation, tuple(m));
            }
            case 'U' -> {
                int relation = m.getInt();
                char next = (char) m.get();
                Tuple old = null;
                boolean oldIsKey = false;
                if (next == 'K' || next == 'O') {
                    old = tuple(m);
                    oldIsKey = next == 'K';
                    next = (char) m.get();
                }
                if (next != 'N') {
                    throw new IllegalStateException("pgoutput: an update without its new row (found '" + next + "')");
                }
                yield new Update(relation, old, oldIsKey, tuple(m));
            }
            case 'D' -> {
                int relation = m.getInt();
                char next = (char) m.get();
                if (next != 'K' && next != 'O') {
                    throw new IllegalStateException("pgoutput: a delete without its old key or row (found '"
                            + next + "')");
                }
                yield new Delete(relation, tuple(m), next == 'K');
            }
            case 'T' -> {
                int count = m.getInt();
                m.get(); // options: CASCADE, RESTART IDENTITY
                int[] relations = new int[count];
                for (int i = 0; i < count; i++) {
                    relations[i] = m.getInt();
                }
                yield new Truncate(relations);
            }
            default -> {
                m.position(m.limit());
                yield new Other(type);
            }
        };
    }

    private static Relation relation(ByteBuffer m) {
        int id = m.getInt();
        String schema = string(m);
        String name = string(m);
        m.get(); // replica identity setting
        int count = m.getShort();
        List<Column> columns = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            boolean key = (m.get() & 1) != 0;
            String column = string(m);
            int type = m.getInt();
            m.getInt(); // type modifier
            columns.add(new Column(key, column, type));
        }
        return new Relation(id, schema, name, List.copyOf(columns));
    }

    private static Tuple tuple(ByteBuffer m) {
        int count = m.getShort();
        byte[] kinds = new byte[count];
        byte[][] values = new byte[count][];
        for (int i = 0; i < count; i++) {
            byte kind = m.get();
            kinds[i] = kind;
            if (kind == TEXT) {
                byte[] value = new byte[m.getInt()];
                m.get(value);
                values[i] = value;
            } else if (kind != NULL && kind != UNCHANGED_TOAST) {
                throw new IllegalStateException("pgoutput: unknown column value kind '" + (char) kind + "'");
            }
        }
        return new Tuple(kinds, values);
    }

    private static String string(ByteBuffer m) {
        int start = m.position();
        int end = start;
        while (m.get(end) != 0) {
            end++;
        }
        String s = new String(m.array(), m.arrayOffset() + start, end - start, StandardCharsets.UTF_8);
        m.position(end + 1);
        return s;
    }

    private static void expect(ByteBuffer m, char expected, String what) {
        char found = (char) m.get();
        if (found != expected) {
            throw new IllegalStateException("pgoutput: expected '" + expected + "' before " + what + ", found '"
                    + found + "'");
        }
    }
}
