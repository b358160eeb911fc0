package io.tidemark.postgres;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.Change;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The log-based capture writes every kind of column as {@code row_to_json} writes it: each change compared, column
 * by column, with {@code row_to_json} of the same row (composites nested and in arrays, domains over arrays and
 * composites, arrays of every dimension and bound, json inside arrays, enums, ranges, BC and infinite timestamps,
 * and many more), and a column added while the stream runs.
 */
@EmbeddedPostgresTest
class LogicalColumnTypesTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private final TestDatabase database;
    private final LogicalCaptures captures;

    LogicalColumnTypesTest(TestDatabase database) {
        this.database = database;
        this.captures = new LogicalCaptures(database, JdbcWatermarkStore.create(database.dataSource()));
    }

    @AfterEach
    void drop() throws Exception {
        captures.close();
    }

    /** Seeded, then started: from here on, every change of the table reaches {@code out}. */
    private SyncEngine start(PostgresLogicalCapture capture, String name, RecordingDestination out) {
        SyncEngine engine = captures.engine(captures.provider(capture),
                capture.track(name).initialSync(InitialSync.INCREMENTAL), out);
        engine.runOnce();
        engine.start();
        return engine;
    }

    private List<String> compare(List<Change> changes, String table) throws Exception {
        ObjectMapper mapper = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
        List<String> diffs = new ArrayList<>();
        for (Change change : changes) {
            int id = change.fields().get("id").asInt();
            JsonNode expected = mapper.readTree(query("SELECT row_to_json(s)::text FROM " + table + " s WHERE id = " + id));
            JsonNode actual = mapper.readTree(change.fields().toString());
            Iterator<Map.Entry<String, JsonNode>> it = expected.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode a = actual.get(e.getKey());
                if (!e.getValue().equals(a)) {
                    diffs.add("row " + id + " column " + e.getKey() + ": row_to_json " + e.getValue() + " | change " + a);
                }
            }
        }
                return diffs;
    }

    @Test
    void every_kind_of_column_arrives_as_row_to_json_writes_it() throws Exception {
        database.execute("""
                CREATE TYPE public.rv_inner AS (a text, b int[]);
                CREATE TYPE public.rv_outer AS (x public.rv_inner, y text, z json, j jsonb, t timestamptz);
                CREATE TYPE public.rv_drop AS (a int, gone int, c text);
                ALTER TYPE public.rv_drop DROP ATTRIBUTE gone;
                CREATE TYPE public.rv_mood AS ENUM ('sad', 'ok');
                CREATE DOMAIN public.rv_ints AS int[];
                CREATE DOMAIN public.rv_posint AS int CHECK (VALUE > 0);
                CREATE DOMAIN public.rv_dcomp AS public.rv_inner;
                CREATE TABLE public.rv_rowtype (a int, b text);
                CREATE TABLE public.rv_t (id int PRIMARY KEY,
                    outer1 public.rv_outer, outers public.rv_outer[], texts text[], js json[], jb jsonb[],
                    dints public.rv_ints, dposs public.rv_posint[], dcomp public.rv_dcomp,
                    tss timestamp[], nums numeric[], floats float8[], bytes bytea[], ranges int4range[],
                    moods public.rv_mood[], dates date[], dropped public.rv_drop, rowt public.rv_rowtype,
                    deep int[], chars char(3)[], points point[], texts2 text[][], inners public.rv_inner[],
                    tstz timestamptz, ts timestamp, bools boolean[], i8 int8[], uuids uuid[], times timetz[],
                    intervals interval[], money1 money[], bits bit(3)[], xmls xml[]);
                """);
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.rv_t"));
        RecordingDestination out = new RecordingDestination();
        start(capture, "T", out);
        database.execute("""
                INSERT INTO public.rv_t VALUES (1,
                  ROW(ROW('in "q" \\ back', '{1,NULL}'), 'y, (z)', '{"a" :  [1, 2]}', '{"b": "c\\"d"}', '2026-12-04 15:23:57.5+00')::public.rv_outer,
                  ARRAY[ROW(ROW('', '{}'), NULL, 'null', 'null', NULL)::public.rv_outer, ROW(NULL, 'NULL', '[ ]', '{}', '-infinity')::public.rv_outer, NULL],
                  ARRAY['a\\b', '"', '{}', ',', ' lead', 'trail ', '', 'NULL', 'null', NULL, E'tab\\there', E'nl\\nx', 'é€'],
                  ARRAY['{"a":1}'::json, '[1, 2 ]', '"s"', 'null'],
                  ARRAY['{"a":1}'::jsonb, '"x\\\\y"'],
                  '{1,2}', '{1,2}', ROW('d', '{3}')::public.rv_dcomp,
                  ARRAY['2026-12-04 15:23:57.123456'::timestamp, 'infinity', '0044-03-15 12:00:00 BC'],
                  ARRAY[1.50, 'NaN', 'Infinity', '-Infinity', 1e20]::numeric[],
                  ARRAY[1.5, 'NaN', 'Infinity', '-Infinity', 1e300, 0.1]::float8[],
                  ARRAY['\\x0102'::bytea, ''],
                  ARRAY['[1,5)'::int4range, 'empty'],
                  '{sad,ok}', ARRAY['2026-12-04'::date, 'infinity', '0044-03-15 BC'],
                  ROW(1, 'c')::public.rv_drop, ROW(5, 'r')::public.rv_rowtype,
                  '[2:3][0:1]={{1,2},{3,NULL}}', ARRAY['a', 'ab ', 'abc'], ARRAY[point(1,2)],
                  '{{"a b",NULL},{"",c}}',
                  ARRAY[ROW('x,y', '{1}'), ROW(NULL, NULL), ROW('', NULL)]::public.rv_inner[],
                  '0044-03-15 12:00:00+00 BC', '0044-03-15 12:00:00 BC', '{t,NULL,f}', '{9223372036854775807}',
                  ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid], ARRAY['12:00+02'::timetz],
                  ARRAY['1 day 2 hours'::interval], ARRAY[12.5::money], ARRAY[B'101'], ARRAY['<a>x</a>'::xml]),
                (2, NULL, '{}', '{}', '{}', '{}', '{}', '{}', NULL, '{}', '{}', '{}', '{}', '{}', '{}', '{}', ROW(NULL, NULL)::public.rv_drop, ROW(NULL, NULL)::public.rv_rowtype, '{}', '{}', '{}', '{}', '{}', NULL, NULL, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')
                """);
        List<Change> changes = out.awaitChanges(2, WAIT);
        assertThat(compare(changes, "public.rv_t")).isEmpty();
    }

    @Test
    void a_column_added_with_a_type_no_column_had_arrives_typed_after_the_types_are_read_again() throws Exception {
        database.execute("""
                CREATE TYPE public.lg_added AS (a int, b text);
                CREATE TABLE public.lg_grows (id int PRIMARY KEY);
                """);
        PostgresLogicalCapture capture = captures.install(PostgresLogicalCapture.forTables("public.lg_grows"));
        RecordingDestination out = new RecordingDestination();
        start(capture, "Grows", out);
        database.execute("INSERT INTO public.lg_grows VALUES (1)");
        out.awaitChanges(1, WAIT);
        database.execute("ALTER TABLE public.lg_grows ADD COLUMN tags text[], ADD COLUMN nums int[],"
                + " ADD COLUMN pair public.lg_added");
        database.execute("INSERT INTO public.lg_grows VALUES (2, '{a,\"b c\"}', '{1,NULL}', ROW(3, 'x'))");
        List<Change> changes = out.awaitChanges(2, WAIT);

        assertThat(compare(changes.subList(1, 2), "public.lg_grows")).isEmpty();
    }

    private String query(String sql) {
        try (Connection c = database.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(sql);
             ResultSet rs = s.executeQuery()) {
            rs.next();
            return rs.getString(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
