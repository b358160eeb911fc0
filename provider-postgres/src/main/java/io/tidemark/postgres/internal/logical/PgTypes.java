package io.tidemark.postgres.internal.logical;

import io.tidemark.sync.internal.jdbc.Jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The types of the captured tables' columns, read from the catalog at each connect, with every type they are made
 * of (a domain's base type, an array's element, a composite's fields): enough to write a value as
 * {@code row_to_json} writes it, which looks through domains and writes arrays and composites as JSON. The stream
 * reads them again when a relation message names a type they lack (a column added with a type no column had).
 */
final class PgTypes {

    private static final int BOOL = 16;
    private static final int INT8 = 20;
    private static final int INT2 = 21;
    private static final int INT4 = 23;
    private static final int JSON = 114;
    private static final int FLOAT4 = 700;
    private static final int FLOAT8 = 701;
    private static final int TIMESTAMP = 1114;
    private static final int TIMESTAMPTZ = 1184;
    private static final int NUMERIC = 1700;
    private static final int JSONB = 3802;
    /** Deeper than any type a table can use, short of a loop, which the catalog does not allow. */
    private static final int MAX_DEPTH = 32;

    /** Only the built-in scalar types; every other type as text. */
    static final PgTypes BUILT_IN = new PgTypes(Map.of());

    private static final String TYPES = """
            WITH RECURSIVE reached(oid) AS (
                SELECT a.atttypid
                  FROM pg_catalog.pg_attribute AS a
                 WHERE a.attrelid = ANY (?::pg_catalog.oid[]) AND a.attnum > 0 AND NOT a.attisdropped
                UNION
                SELECT part.oid
                  FROM reached AS r
                  JOIN pg_catalog.pg_type AS t ON t.oid = r.oid
                 CROSS JOIN LATERAL (SELECT t.typbasetype
                                     UNION ALL SELECT t.typelem
                                     UNION ALL SELECT f.atttypid
                                                 FROM pg_catalog.pg_attribute AS f
                                                WHERE f.attrelid = t.typrelid AND f.attnum > 0
                                                  AND NOT f.attisdropped) AS part(oid)
                 WHERE part.oid <> 0
            )
            SELECT t.oid::pg_catalog.int4, t.typtype::pg_catalog.text, t.typbasetype::pg_catalog.int4,
                   t.typelem::pg_catalog.int4, t.typlen::pg_catalog.int4, t.typdelim::pg_catalog.text,
                   f.attname::pg_catalog.text, f.atttypid::pg_catalog.int4
              FROM reached AS r
              JOIN pg_catalog.pg_type AS t ON t.oid = r.oid
              LEFT JOIN pg_catalog.pg_attribute AS f
                     ON t.typtype = 'c' AND f.attrelid = t.typrelid AND f.attnum > 0 AND NOT f.attisdropped
             ORDER BY t.oid, f.attnum""";

    /** A type as the catalog describes it; a composite's fields in their order. */
    record Entry(char typtype, int baseType, int elementType, int length, char delimiter, List<String> fieldNames,
                 List<Integer> fieldTypes) {
    }

    private final Map<Integer, Entry> catalog;
    private final Map<Integer, ValueType> resolved = new HashMap<>();

    PgTypes(Map<Integer, Entry> catalog) {
        this.catalog = Map.copyOf(catalog);
    }

    /** The types of the tables' columns and of what they are made of, in one query. */
    static PgTypes load(Connection connection, Collection<Integer> tableOids) throws SQLException {
        String oids = tableOids.stream().map(String::valueOf).collect(Collectors.joining(",", "{", "}"));
        Map<Integer, Entry> catalog = new LinkedHashMap<>();
        Map<Integer, List<String>> names = new HashMap<>();
        Map<Integer, List<Integer>> types = new HashMap<>();
        Jdbc.query(connection, TYPES, rs -> {
            int oid = rs.getInt(1);
            List<String> fieldNames = names.computeIfAbsent(oid, o -> new ArrayList<>());
            List<Integer> fieldTypes = types.computeIfAbsent(oid, o -> new ArrayList<>());
            if (rs.getString(7) != null) {
                fieldNames.add(rs.getString(7));
                fieldTypes.add(rs.getInt(8));
            }
            catalog.putIfAbsent(oid, new Entry(rs.getString(2).charAt(0), rs.getInt(3), rs.getInt(4), rs.getInt(5),
                    rs.getString(6).charAt(0), fieldNames, fieldTypes));
            return oid;
        }, oids);
        return new PgTypes(catalog);
    }

    /** Whether {@code oid} is a built-in scalar type or was in the catalog when this was read. */
    boolean knows(int oid) {
        return describesBuiltIn(oid) || catalog.containsKey(oid);
    }

    private static boolean describesBuiltIn(int oid) {
        return switch (oid) {
            case BOOL, INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC, JSON, JSONB, TIMESTAMP, TIMESTAMPTZ -> true;
            default -> false;
        };
    }

    /** How a value of type {@code oid} is written; memoised, so a relation message resolves each type once. */
    ValueType resolve(int oid) {
        return resolve(oid, 0);
    }

    private ValueType resolve(int oid, int depth) {
        ValueType known = resolved.get(oid);
        if (known != null) {
            return known;
        }
        ValueType type = depth > MAX_DEPTH ? ValueType.TEXT : describe(oid, depth);
        resolved.put(oid, type);
        return type;
    }

    private ValueType describe(int oid, int depth) {
        switch (oid) {
            case BOOL:
                return ValueType.BOOLEAN;
            case INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC:
                return ValueType.NUMBER;
            case JSON, JSONB:
                return ValueType.JSON;
            case TIMESTAMP, TIMESTAMPTZ:
                return ValueType.TIMESTAMP;
            default:
                break;
        }
        Entry entry = catalog.get(oid);
        if (entry == null) {
            return ValueType.TEXT;
        }
        if (entry.typtype() == 'd') {
            return resolve(entry.baseType(), depth + 1); // row_to_json looks through domains
        }
        if (entry.elementType() != 0 && entry.length() == -1) {
            Entry element = catalog.get(entry.elementType());
            return ValueType.arrayOf(resolve(entry.elementType(), depth + 1),
                    element == null ? ',' : element.delimiter());
        }
        if (entry.typtype() == 'c') {
            List<ValueType> fields = new ArrayList<>(entry.fieldTypes().size());
            for (int field : entry.fieldTypes()) {
                fields.add(resolve(field, depth + 1));
            }
            return ValueType.composite(entry.fieldNames(), fields);
        }
        return ValueType.TEXT;
    }
}
