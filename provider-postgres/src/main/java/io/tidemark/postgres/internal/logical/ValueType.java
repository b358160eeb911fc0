package io.tidemark.postgres.internal.logical;

import java.util.List;

/**
 * How a column's text value becomes JSON, resolved once per relation message from the column's type (see
 * {@link PgTypes}): the categories {@code row_to_json} writes differently, a domain already replaced by its base
 * type. An array carries its element's type and delimiter, a composite its fields' names and types.
 */
record ValueType(Kind kind, ValueType element, char delimiter, List<String> fieldNames, List<ValueType> fieldTypes) {

    enum Kind {
        BOOLEAN, NUMBER, JSON, TIMESTAMP, TEXT, ARRAY, COMPOSITE
    }

    static final ValueType BOOLEAN = scalar(Kind.BOOLEAN);
    static final ValueType NUMBER = scalar(Kind.NUMBER);
    static final ValueType JSON = scalar(Kind.JSON);
    static final ValueType TIMESTAMP = scalar(Kind.TIMESTAMP);
    static final ValueType TEXT = scalar(Kind.TEXT);

    ValueType {
        fieldNames = List.copyOf(fieldNames);
        fieldTypes = List.copyOf(fieldTypes);
    }

    private static ValueType scalar(Kind kind) {
        return new ValueType(kind, null, ',', List.of(), List.of());
    }

    static ValueType arrayOf(ValueType element, char delimiter) {
        return new ValueType(Kind.ARRAY, element, delimiter, List.of(), List.of());
    }

    static ValueType composite(List<String> names, List<ValueType> types) {
        return new ValueType(Kind.COMPOSITE, null, ',', names, types);
    }
}
