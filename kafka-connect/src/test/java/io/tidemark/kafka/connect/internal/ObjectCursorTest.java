package io.tidemark.kafka.connect.internal;

import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cursor's version rules against the generated outbox on the embedded PostgreSQL, without Kafka. */
@EmbeddedPostgresTest
class ObjectCursorTest {

    private final TestDatabase database;

    ObjectCursorTest(TestDatabase database) {
        this.database = database;
    }

    private TrackedObject outbox(String table, InitialSync initialSync) {
        database.execute("CREATE TABLE public." + table + " (id int PRIMARY KEY, name text)");
        PostgresOutbox outbox = PostgresOutbox.forTable("public." + table).build();
        outbox.install(database.dataSource());
        return TrackedObject.of(table, outbox.changeFunction()).initialSync(initialSync);
    }

    private ObjectCursor cursor(TrackedObject object, int pageSize, OptionalLong committed) {
        return new ObjectCursor(object, PostgresProvider.builder(database.dataSource()).listen(false).build(),
                CallContext.none(), pageSize, committed);
    }

    /** Every step until the procedure has nothing more. */
    private static List<ObjectCursor.Step> drain(ObjectCursor cursor) {
        List<ObjectCursor.Step> steps = new ArrayList<>();
        ObjectCursor.Step step;
        while (!(step = cursor.next()).isIdle()) {
            steps.add(step);
        }
        return steps;
    }

    @Test
    void an_incremental_object_is_seeded_first_and_delivers_only_later_changes() {
        TrackedObject object = outbox("seeded", InitialSync.INCREMENTAL);
        database.execute("INSERT INTO public.seeded VALUES (1, 'before')");
        ObjectCursor cursor = cursor(object, 10, OptionalLong.empty());

        ObjectCursor.Step seed = cursor.next();
        assertThat(seed.positionOnly()).isPresent();
        assertThat(seed.changes()).isEmpty();
        database.execute("INSERT INTO public.seeded VALUES (2, 'after')");

        List<ObjectCursor.Step> steps = drain(cursor);
        assertThat(steps).flatExtracting(ObjectCursor.Step::changes)
                .extracting(e -> e.change().field("id").orElseThrow().asInt()).containsExactly(2);
    }

    @Test
    void a_batch_never_splits_a_version_and_each_record_carries_the_highest_complete_version() {
        TrackedObject object = outbox("paged", InitialSync.INCREMENTAL);
        ObjectCursor cursor = cursor(object, 4, OptionalLong.empty());
        long seeded = cursor.next().positionOnly().getAsLong();
        database.execute("INSERT INTO public.paged SELECT g, 'x' FROM generate_series(1, 3) g");    // one version
        database.execute("INSERT INTO public.paged SELECT g, 'x' FROM generate_series(4, 9) g");    // one version
        database.execute("INSERT INTO public.paged VALUES (10, 'x')");                              // one version

        List<ObjectCursor.Step> steps = drain(cursor);

        // page size 4: the 6-change version is not cut after its first change, nor after its fourth
        assertThat(steps).extracting(s -> s.changes().size()).containsExactly(9, 1);
        assertThat(steps).allSatisfy(s -> assertThat(s.endsTransaction()).isTrue());
        List<ObjectCursor.Emitted> first = steps.get(0).changes();
        long v1 = first.get(0).change().version().getAsLong();
        long v2 = first.get(3).change().version().getAsLong();
        assertThat(first).extracting(e -> e.offsetVersion().orElse(-1))
                .containsExactly(seeded, seeded, v1, v1, v1, v1, v1, v1, v2);
        assertThat(cursor.position()).isEqualTo(steps.get(1).changes().get(0).offsetVersion());
        // headers: the engine's pages of 4 over the 10 changes
        assertThat(first).extracting(e -> e.page().pageNumber()).containsExactly(1, 1, 1, 1, 2, 2, 2, 2, 3);
        assertThat(first.get(0).page().pageCount()).isEqualTo(3);
    }

    @Test
    void a_full_export_is_one_unit_only_its_last_record_carries_the_version() {
        TrackedObject object = outbox("exported", InitialSync.FULL);
        database.execute("INSERT INTO public.exported SELECT g, 'x' FROM generate_series(1, 5) g");
        ObjectCursor cursor = cursor(object, 2, OptionalLong.empty());

        List<ObjectCursor.Step> steps = drain(cursor);

        List<ObjectCursor.Emitted> all = steps.stream().flatMap(s -> s.changes().stream()).toList();
        assertThat(all).hasSize(5);
        assertThat(all.subList(0, 4)).allSatisfy(e -> assertThat(e.offsetVersion()).isEmpty());
        assertThat(all.get(4).offsetVersion()).isPresent().isEqualTo(cursor.position());
        assertThat(steps).extracting(ObjectCursor.Step::endsTransaction).containsExactly(false, false, true);
        assertThat(all).allSatisfy(e -> assertThat(e.page().syncType().name()).isEqualTo("FULL"));
    }

    @Test
    void an_empty_first_export_still_stores_a_position() {
        TrackedObject object = outbox("empty", InitialSync.FULL);
        ObjectCursor cursor = cursor(object, 10, OptionalLong.empty());

        ObjectCursor.Step step = cursor.next();

        assertThat(step.positionOnly()).isPresent();
        assertThat(cursor.next().isIdle()).isTrue();
    }

    @Test
    void a_response_that_would_move_the_position_back_is_refused_naming_the_object() {
        database.execute("""
                CREATE FUNCTION public.backwards_changes(request json) RETURNS json LANGUAGE sql AS $$
                  SELECT '{"Metadata":{"Sync":{"Version":5,"Type":"Diff","ReasonCode":0}},"Data":[]}'::json
                $$""");
        ObjectCursor cursor = cursor(TrackedObject.of("Backwards", "public.backwards_changes"), 10,
                OptionalLong.of(10));

        assertThatThrownBy(cursor::next).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
            assertThat(e.getMessage()).contains("Backwards").contains("from 10 to 5");
        });
        assertThat(cursor.position()).hasValue(10);
    }

    @Test
    void a_response_that_breaks_the_contract_hands_out_nothing() {
        database.execute("""
                CREATE FUNCTION public.broken_changes(request json) RETURNS json LANGUAGE sql AS $$
                  SELECT '{"Metadata":{"Sync":{"Version":20,"Type":"Diff"}},"Data":[{"$version":11,"id":1},
                           {"$version":12,"$operation":"X","id":2}]}'::json
                $$""");
        ObjectCursor cursor = cursor(TrackedObject.of("Broken", "public.broken_changes"), 10, OptionalLong.of(10));

        assertThatThrownBy(cursor::next).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_RESPONSE));
        assertThat(cursor.inResponse()).isFalse();
        assertThat(cursor.position()).hasValue(10);
    }
}
