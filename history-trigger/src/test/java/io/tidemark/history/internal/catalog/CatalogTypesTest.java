package io.tidemark.history.internal.catalog;

import io.tidemark.history.Db;
import io.tidemark.history.InvariantsAfterEach;
import io.tidemark.history.TemporalTable;
import io.tidemark.history.Versions;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every versioned column keeps its exact type in history, and every type, with or without an equality operator,
 * survives updates: a change writes a version, a repeat of the same values writes nothing.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class CatalogTypesTest {

    /** column, type, first value, second value (SQL literals). */
    private static final List<String[]> COLUMNS = List.of(
            new String[] {"c_varchar", "varchar(12)", "'a'", "'b'"},
            new String[] {"c_char", "char(3)", "'a'", "'b'"},
            new String[] {"c_numeric", "numeric(8,3)", "1.5", "2.5"},
            new String[] {"c_float", "double precision", "1.5", "2.5"},
            new String[] {"c_ts", "timestamp(2) without time zone", "'2020-01-01'", "'2021-01-01'"},
            new String[] {"c_tstz", "timestamptz", "'2020-01-01Z'", "'2021-01-01Z'"},
            new String[] {"c_interval", "interval", "'1 day'", "'2 days'"},
            new String[] {"c_uuid", "uuid", "'00000000-0000-0000-0000-000000000001'", "'00000000-0000-0000-0000-000000000002'"},
            new String[] {"c_inet", "inet", "'10.0.0.1'", "'10.0.0.2'"},
            new String[] {"c_bytea", "bytea", "'\\x01'", "'\\x02'"},
            new String[] {"c_bits", "bit varying(8)", "B'101'", "B'111'"},
            new String[] {"c_jsonb", "jsonb", "'{\"a\": 1}'", "'{\"a\": 2}'"},
            new String[] {"c_json", "json", "'{\"a\": 1}'", "'{\"a\": 2}'"},
            new String[] {"c_xml", "xml", "'<a>1</a>'", "'<a>2</a>'"},
            new String[] {"c_point", "point", "'(1,2)'", "'(2,3)'"},
            new String[] {"c_box", "box", "'(0,0),(1,1)'", "'(1,1),(2,2)'"},
            new String[] {"c_tsvector", "tsvector", "'a b'", "'c d'"},
            new String[] {"c_range", "int4range", "'[1,5)'", "'[2,6)'"},
            new String[] {"c_int_array", "integer[]", "'{1,2}'", "'{1,3}'"},
            new String[] {"c_json_array", "json[]", "ARRAY['{\"a\": 1}'::json]", "ARRAY['{\"a\": 2}'::json]"},
            new String[] {"c_enum", "public.mood", "'happy'", "'sad'"},
            new String[] {"c_enum_array", "public.mood[]", "'{happy}'", "'{sad}'"},
            new String[] {"c_domain", "public.positive", "1", "2"},
            new String[] {"c_json_domain", "public.doc", "'{\"a\": 1}'", "'{\"a\": 2}'"},
            new String[] {"c_composite", "public.pair", "ROW(1, '{\"a\": 1}')", "ROW(1, '{\"a\": 2}')"},
            new String[] {"c_collated", "text COLLATE \"C\"", "'a'", "'b'"});

    @Test
    void every_type_is_kept_exactly_and_survives_updates(DataSource ds) {
        Db.exec(ds, "CREATE TYPE public.mood AS ENUM ('happy', 'sad');"
                + " CREATE DOMAIN public.positive AS integer CHECK (VALUE > 0);"
                + " CREATE DOMAIN public.doc AS json;"
                + " CREATE TYPE public.pair AS (n integer, j json)");
        StringBuilder ddl = new StringBuilder("CREATE TABLE typed (id int PRIMARY KEY");
        StringBuilder first = new StringBuilder("INSERT INTO typed VALUES (1");
        for (String[] c : COLUMNS) {
            ddl.append(", ").append(c[0]).append(' ').append(c[1]);
            first.append(", ").append(c[2]);
        }
        Db.exec(ds, ddl.append(")") + "; " + first.append(")"));
        TemporalTable typed = TemporalTable.forTable("typed").build();
        typed.install(ds);

        List<Map<String, Object>> types = Db.rows(ds, "SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS t,"
                + " a.attcollation FROM pg_attribute a WHERE a.attrelid = ?::regclass AND a.attnum > 0"
                + " AND NOT a.attisdropped AND a.attname LIKE 'c\\_%' ORDER BY a.attnum", "typed");
        assertThat(Db.rows(ds, "SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS t, a.attcollation"
                + " FROM pg_attribute a WHERE a.attrelid = ?::regclass AND a.attnum > 0 AND NOT a.attisdropped"
                + " AND a.attname LIKE 'c\\_%' ORDER BY a.attnum", "typed_history"))
                .as("same types, typmods, arrays, domains, enums and collations").isEqualTo(types);

        int versions = 1;
        for (String[] c : COLUMNS) {
            Db.exec(ds, "UPDATE typed SET " + c[0] + " = " + c[3]);
            Db.exec(ds, "UPDATE typed SET " + c[0] + " = " + c[3]);
            versions++;
            assertThat(Versions.of(ds, "typed_history", "id = 1").size()).as(c[0] + " " + c[1]).isEqualTo(versions);
        }
        assertThat(typed.verify(ds).drifts()).isEmpty();
    }
}
