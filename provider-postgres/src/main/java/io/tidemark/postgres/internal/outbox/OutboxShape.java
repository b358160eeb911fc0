package io.tidemark.postgres.internal.outbox;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What the outbox captures of a table: the key (which identifies a row in a delete) and the columns whose
 * values travel with inserts and updates, in payload order. The key is always part of the payload.
 */
public final class OutboxShape {

    private final List<OutboxColumn> key;
    private final List<OutboxColumn> columns;

    private OutboxShape(List<OutboxColumn> key, List<OutboxColumn> columns) {
        this.key = List.copyOf(key);
        this.columns = List.copyOf(columns);
    }

    /**
     * @param key     the key columns, in key order
     * @param columns the captured columns in payload order; key columns missing from it are put first
     */
    public static OutboxShape of(List<OutboxColumn> key, List<OutboxColumn> columns) {
        if (key.isEmpty()) {
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "An outbox needs at least one key column");
        }
        List<OutboxColumn> all = new ArrayList<>();
        for (OutboxColumn k : key) {
            if (columns.stream().noneMatch(c -> c.name().equals(k.name()))) {
                all.add(k);
            }
        }
        all.addAll(columns);
        Set<String> names = new HashSet<>();
        Set<String> keys = new HashSet<>();
        for (OutboxColumn c : all) {
            if (!names.add(c.name())) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "Column \"" + c.name()
                        + "\" is captured twice");
            }
            if (c.payloadKey().startsWith("$")) {
                throw new TidemarkException(ErrorCode.SCHEMA_UNSUPPORTED, "Column \"" + c.name() + "\" would travel"
                        + " under a key starting with '$', which the contract reserves; rename it with"
                        + " payloadKey(column, key)");
            }
            if (!keys.add(c.payloadKey())) {
                throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, "Two columns travel under the same"
                        + " payload key \"" + c.payloadKey() + "\"");
            }
        }
        return new OutboxShape(key, all);
    }

    public List<OutboxColumn> key() {
        return key;
    }

    /** Every captured column, key included, in payload order. */
    public List<OutboxColumn> columns() {
        return columns;
    }

    /** The captured columns that are not part of the key. */
    public List<OutboxColumn> nonKeyColumns() {
        return columns.stream().filter(c -> !key.contains(c)).toList();
    }
}
