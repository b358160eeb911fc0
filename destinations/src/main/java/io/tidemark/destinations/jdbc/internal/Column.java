package io.tidemark.destinations.jdbc.internal;

/**
 * One column of the target table and the change field it is fed from.
 *
 * @param name   the column's name, as the catalog spells it
 * @param quoted the name quoted the dialect's way
 * @param field  the change field its value comes from
 * @param key    whether it belongs to the key the rows are matched on
 */
public record Column(String name, String quoted, String field, boolean key) {
}
