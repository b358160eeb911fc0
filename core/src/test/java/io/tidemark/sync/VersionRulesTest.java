package io.tidemark.sync;

import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.CallGate;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.tidemark.sync.testkit.Responses.inserts;
import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The version rules of the README ("The version rules, in user terms"), rule by rule, against a scripted
 * provider and the in-memory store. The PostgreSQL module proves them again through a real function.
 */
class VersionRulesTest {

    private static final String ITEMS = "Items";

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();
    private final List<SyncEngine> engines = new ArrayList<>();

    @AfterEach
    void closeEngines() {
        engines.forEach(SyncEngine::close);
    }

    private SyncEngine engine(TrackedObject object, RecordingDestination... destinations) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(object)
                .pageSize(1000);
        for (int i = 0; i < destinations.length; i++) {
            builder.destination("d" + i, destinations[i]);
        }
        SyncEngine engine = builder.build();
        engines.add(engine);
        return engine;
    }

    private static TrackedObject items() {
        return TrackedObject.of(ITEMS, "public.items_changes");
    }

    private OptionalLong stored(String object) {
        return store.load(object).map(s -> s.version()).orElse(OptionalLong.empty());
    }

    // Rule 1: nothing stored is not zero.

    @Test
    void rule1_a_stored_zero_is_a_real_watermark_and_the_object_is_not_seeded_again() {
        provider.object(ITEMS)
                .thenReturn(response(0, "Diff", 0))
                .thenReturn(response(0, "Diff", 0))
                .thenReturn(response(1, "Diff", 0, row("I", 1, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items().initialSync(InitialSync.INCREMENTAL), out);

        assertThat(engine.runOnce().get(ITEMS).outcome()).isEqualTo(Outcome.SEEDED);
        assertThat(stored(ITEMS)).hasValue(0);
        assertThat(engine.runOnce().get(ITEMS).outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(engine.runOnce().get(ITEMS).outcome()).isEqualTo(Outcome.DELIVERED);

        assertThat(provider.calls(ITEMS)).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"seed\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}");
        assertThat(out.changes()).hasSize(1);
        assertThat(stored(ITEMS)).hasValue(1);
    }

    @Test
    void rule1_after_a_full_first_cycle_a_stored_zero_is_asked_for_as_a_watermark_not_as_a_first_export() {
        provider.object(ITEMS).thenReturn(response(0, "Full", 0, "{\"Id\":1}")).thenReturn(response(0, "Diff", 0));
        SyncEngine engine = engine(items(), new RecordingDestination());

        engine.runOnce();
        ObjectReport second = engine.runOnce().get(ITEMS);

        assertThat(second.outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(provider.requests(ITEMS)).extracting(r -> r.initial()).containsExactly(true, false);
        assertThat(provider.calls(ITEMS)).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}");
    }

    @Test
    void rule1_a_reset_object_starts_again_with_a_first_cycle() {
        provider.object(ITEMS)
                .thenReturn(response(7, "Diff", 0, row("I", 7, "\"Id\":1")))
                .thenReturn(response(3, "Full", 0, row("I", 3, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items(), out);
        engine.runOnce();

        engine.reset(ITEMS);

        assertThat(stored(ITEMS)).isEmpty();
        ObjectReport again = engine.runOnce().get(ITEMS);
        assertThat(again.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(again.fromVersion()).isEmpty();
        assertThat(stored(ITEMS)).hasValue(3);
        assertThat(provider.calls(ITEMS)).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}");
    }

    // Rule 2: the first cycle.

    @Test
    void rule2_a_full_first_cycle_asks_from_zero_and_delivers_everything() {
        provider.object(ITEMS).thenReturn(response(3, "Full", 0, row("I", 2, "\"Id\":1"), row("I", 3, "\"Id\":2")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items().initialSync(InitialSync.FULL), out);

        ObjectReport report = engine.runOnce().get(ITEMS);

        assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(report.fromVersion()).isEmpty();
        assertThat(report.toVersion()).hasValue(3);
        assertThat(provider.calls(ITEMS)).containsExactly("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}");
        assertThat(out.changes()).extracting(c -> c.field("Id").orElseThrow().asInt()).containsExactly(1, 2);
        assertThat(stored(ITEMS)).hasValue(3);
    }

    @Test
    void rule2_an_incremental_first_cycle_seeds_stores_the_version_and_discards_rows_with_a_warning() {
        provider.object(ITEMS)
                .thenReturn(response(41, "Diff", 0, row("I", 40, "\"Id\":1"), row("U", 41, "\"Id\":1")))
                .thenReturn(response(41, "Diff", 0));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items().initialSync(InitialSync.INCREMENTAL), out);

        ObjectReport seed = engine.runOnce().get(ITEMS);

        assertThat(seed.outcome()).isEqualTo(Outcome.SEEDED);
        assertThat(seed.toVersion()).hasValue(41);
        assertThat(seed.warnings()).containsExactly("returned 2 rows during an incremental seed; discarding them");
        assertThat(out.offered()).isZero();
        assertThat(stored(ITEMS)).hasValue(41);

        engine.runOnce();
        assertThat(provider.requests(ITEMS)).extracting(r -> r.mode()).containsExactly(
                ChangeRequest.Mode.SEED, ChangeRequest.Mode.SYNC);
        assertThat(provider.calls(ITEMS)).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"seed\"}",
                "{\"fromVersion\":41,\"mode\":\"sync\"}");
    }

    @Test
    void rule2_an_incremental_first_cycle_takes_the_servers_version_without_calling_the_procedure() {
        provider.object(ITEMS).currentVersion(500).thenReturn(response(502, "Diff", 0, row("U", 502, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items().initialSync(InitialSync.INCREMENTAL), out);

        ObjectReport seed = engine.runOnce().get(ITEMS);

        assertThat(seed.outcome()).isEqualTo(Outcome.SEEDED);
        assertThat(seed.toVersion()).hasValue(500);
        assertThat(provider.calls(ITEMS)).isEmpty();
        assertThat(out.offered()).isZero();
        assertThat(stored(ITEMS)).hasValue(500);

        engine.runOnce();
        assertThat(provider.calls(ITEMS)).containsExactly("{\"fromVersion\":500,\"mode\":\"sync\"}");
        assertThat(out.changes()).hasSize(1);
    }

    // Rule 3: what is stored.

    @Test
    void rule3_stores_the_highest_row_version_never_the_higher_metadata_version() {
        provider.object(ITEMS).thenReturn(
                response(100, "Diff", 0, row("I", 5, "\"Id\":1"), row("U", 9, "\"Id\":1"), row("D", 7, "\"Id\":2")));
        SyncEngine engine = engine(items(), new RecordingDestination());

        ObjectReport report = engine.runOnce().get(ITEMS);

        assertThat(report.toVersion()).hasValue(9);
        assertThat(stored(ITEMS)).hasValue(9);
    }

    @Test
    void rule3_stores_the_metadata_version_when_no_row_carries_one() {
        provider.object(ITEMS)
                .thenReturn(response(12, "Full", 0, "{\"Id\":1}", "{\"Id\":2,\"$version\":null}"))
                .thenReturn(response(15, "Diff", 0));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items(), out);

        assertThat(engine.runOnce().get(ITEMS).toVersion()).hasValue(12);
        assertThat(out.changes()).hasSize(2).allSatisfy(c -> assertThat(c.version()).isEmpty());
        assertThat(stored(ITEMS)).hasValue(12);

        ObjectReport empty = engine.runOnce().get(ITEMS);
        assertThat(empty.outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(stored(ITEMS)).as("a diff without changes writes nothing at once: its version is stored at most"
                + " every 10 s (StoreReadsTest)").hasValue(12);
    }

    // Rule 4: when it is stored.

    @Test
    void rule4_a_refusing_destination_keeps_its_position_and_gets_the_same_changes_again() {
        String rows = response(8, "Diff", 0, row("I", 7, "\"Id\":1"), row("U", 8, "\"Id\":1"));
        provider.object(ITEMS)
                .thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":0")))
                .thenReturn(rows)
                .thenReturn(response(8, "Diff", 0)) // d0, at 8, asks first
                .thenReturn(rows);                  // d1 catches up from its own position
        RecordingDestination accepting = new RecordingDestination();
        RecordingDestination refusing = new RecordingDestination();
        SyncEngine engine = engine(items(), accepting, refusing);
        engine.runOnce();
        refusing.refuseAll();

        ObjectReport blocked = engine.runOnce().get(ITEMS);

        // d0 moved on, d1 is blocked: the watermark, their lowest position, stays at 5.
        assertThat(blocked.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(blocked.blockedDestinations()).singleElement().satisfies(d -> {
            assertThat(d.destination()).isEqualTo("d1");
            assertThat(d.toVersion()).hasValue(5);
            assertThat(d.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.DESTINATION_FAILED);
            assertThat(d.error().get().getMessage()).contains(ITEMS).contains("'d1'").contains("stays at 5");
        });
        assertThat(blocked.toVersion()).hasValue(5);
        assertThat(stored(ITEMS)).hasValue(5);
        assertThat(store.load(ITEMS).orElseThrow().positions().get("d0").version()).isEqualTo(8L);
        assertThat(store.load(ITEMS).orElseThrow().positions().get("d1").version()).isEqualTo(5L);
        assertThat(store.load(ITEMS).orElseThrow().lastError()).get().asString().contains("DESTINATION_FAILED");

        refusing.acceptAll();
        ObjectReport retried = engine.runOnce().get(ITEMS);

        assertThat(retried.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(provider.calls(ITEMS)).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":5,\"mode\":\"sync\"}",
                "{\"fromVersion\":8,\"mode\":\"sync\"}",
                "{\"fromVersion\":5,\"mode\":\"sync\"}");
        assertThat(refusing.changes()).extracting(Change::rawJson).containsExactly(
                "{\"$operation\":\"I\",\"$version\":5,\"Id\":0}",
                "{\"$operation\":\"I\",\"$version\":7,\"Id\":1}",
                "{\"$operation\":\"U\",\"$version\":8,\"Id\":1}");
        assertThat(accepting.changes()).hasSize(3);
        assertThat(stored(ITEMS)).hasValue(8);
        assertThat(store.load(ITEMS).orElseThrow().lastError()).isEmpty();
    }

    @Test
    void rule4_when_every_destination_refuses_the_object_is_blocked() {
        String rows = response(8, "Diff", 0, row("I", 7, "\"Id\":1"));
        provider.object(ITEMS).thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":0"))).thenReturn(rows);
        RecordingDestination refusing = new RecordingDestination();
        SyncEngine engine = engine(items(), refusing);
        engine.runOnce();
        refusing.refuseAll();

        ObjectReport blocked = engine.runOnce().get(ITEMS);

        assertThat(blocked.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(blocked.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.DESTINATION_FAILED);
        assertThat(stored(ITEMS)).hasValue(5);
        assertThat(engine.status(ITEMS).lastReport()).get().extracting(ObjectReport::outcome)
                .isEqualTo(Outcome.BLOCKED);
    }

    @Test
    void rule4_nothing_is_stored_beyond_the_pages_accepted() {
        provider.object(ITEMS).thenReturn(response(2500, "Diff", 0, inserts(1, 2500)));
        RecordingDestination out = new RecordingDestination().refuseWhen(batch -> batch.pageNumber() == 3);
        SyncEngine engine = engine(items(), out);

        ObjectReport report = engine.runOnce().get(ITEMS);

        assertThat(report.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(out.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1, 2);
        assertThat(stored(ITEMS)).hasValue(2000); // the end of page 2, stored before page 3 was offered
    }

    // Rule 5: never backwards.

    @Test
    void rule5_a_lower_version_is_refused_and_nothing_is_delivered() {
        provider.object(ITEMS)
                .thenReturn(response(10, "Diff", 0, row("I", 10, "\"Id\":1")))
                .thenReturn(response(5, "Diff", 0))
                .thenReturn(response(20, "Diff", 0, row("U", 8, "\"Id\":1"), row("U", 9, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items(), out);
        engine.runOnce();
        out.clear();

        ObjectReport lowerMetadata = engine.runOnce().get(ITEMS);
        ObjectReport lowerRows = engine.runOnce().get(ITEMS);

        for (ObjectReport report : List.of(lowerMetadata, lowerRows)) {
            assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
            assertThat(report.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
            assertThat(report.error().get().getMessage()).contains(ITEMS).contains("back from 10");
        }
        assertThat(out.offered()).isZero();
        assertThat(stored(ITEMS)).hasValue(10);
    }

    @Test
    void rule5_two_engines_sharing_a_store_cannot_overwrite_each_others_progress() throws Exception {
        CallGate held = new CallGate();
        provider.object(ITEMS)
                .thenReturn(response(10, "Diff", 0, row("I", 10, "\"Id\":1")))
                .thenBlock(held, response(20, "Diff", 0, row("U", 20, "\"Id\":1")))
                .thenReturn(response(15, "Diff", 0, row("U", 15, "\"Id\":1")));
        SyncEngine slow = engine(items(), new RecordingDestination());
        SyncEngine fast = engine(items(), new RecordingDestination());
        slow.runOnce();

        CompletableFuture<ObjectReport> overtaken = CompletableFuture.supplyAsync(() -> slow.runOnce(ITEMS));
        assertThat(held.awaitEntered(Duration.ofSeconds(10))).isTrue();
        assertThat(fast.runOnce(ITEMS).toVersion()).hasValue(15);
        held.release();
        ObjectReport report = overtaken.get(10, TimeUnit.SECONDS);

        assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(report.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.WATERMARK_CONFLICT);
        assertThat(report.error().get().getMessage()).contains(ITEMS).contains("expected 10").contains("holds 15");
        assertThat(stored(ITEMS)).hasValue(15);
    }

    @Test
    void rule5_an_engine_overtaken_by_another_cannot_move_the_shared_watermark_back() throws Exception {
        CallGate held = new CallGate();
        provider.object(ITEMS)
                .thenReturn(response(10, "Diff", 0, row("I", 10, "\"Id\":1")))
                .thenBlock(held, response(12, "Diff", 0, row("U", 12, "\"Id\":1")))
                .thenReturn(response(15, "Diff", 0, row("U", 15, "\"Id\":1")));
        SyncEngine slow = engine(items(), new RecordingDestination());
        SyncEngine fast = engine(items(), new RecordingDestination());
        slow.runOnce();

        CompletableFuture<ObjectReport> overtaken = CompletableFuture.supplyAsync(() -> slow.runOnce(ITEMS));
        assertThat(held.awaitEntered(Duration.ofSeconds(10))).isTrue();
        fast.runOnce(ITEMS);
        held.release();
        ObjectReport report = overtaken.get(10, TimeUnit.SECONDS);

        assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(report.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
        assertThat(stored(ITEMS)).hasValue(15);
    }

    // Rule 6 (bad responses fail closed) has its own test: MalformedResponseTest.

    // Rule 7: metadata travels.

    @Test
    void rule7_type_and_reason_code_reach_every_destination() {
        provider.object(ITEMS).thenReturn(response(30, "Full", 1, "{\"Id\":1}", "{\"Id\":2}"));
        RecordingDestination first = new RecordingDestination();
        RecordingDestination second = new RecordingDestination();
        SyncEngine engine = engine(items(), first, second);

        ObjectReport report = engine.runOnce().get(ITEMS);

        assertThat(report.syncType()).hasValue(SyncType.FULL);
        assertThat(report.reasonCode()).isEqualTo(1);
        for (RecordingDestination d : List.of(first, second)) {
            assertThat(d.batches()).singleElement().satisfies(b -> {
                assertThat(b.syncType()).isEqualTo(SyncType.FULL);
                assertThat(b.reasonCode()).isEqualTo(1);
                assertThat(b.toVersion()).isEqualTo(30);
            });
        }
    }

    // Rule 8: streaming, in bounded pages.

    @Test
    void rule8_a_large_response_is_delivered_in_bounded_pages() {
        String[] rows = new String[2500];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = row("I", 1000 + i, "\"Id\":" + i + ",\"Price\":12.50");
        }
        provider.object(ITEMS).thenReturn(response(3499, "Diff", 0, rows));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items(), out);

        ObjectReport report = engine.runOnce().get(ITEMS);

        assertThat(report.pageCount()).isEqualTo(3);
        assertThat(out.batches()).extracting(b -> b.changes().size()).containsExactly(1000, 1000, 500);
        assertThat(out.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1, 2, 3);
        assertThat(out.batches()).allSatisfy(b -> {
            assertThat(b.pageCount()).isEqualTo(3);
            assertThat(b.totalChanges()).isEqualTo(2500);
            assertThat(b.batchId()).isEqualTo(ITEMS + ":0-3499");
        });
        assertThat(out.batches().get(2).isLastPage()).isTrue();
        Change last = out.changes().get(2499);
        assertThat(last.version()).hasValue(3499);
        assertThat(last.field("Price").orElseThrow().decimalValue()).isEqualByComparingTo("12.50");
        assertThat(last.field("Price").orElseThrow().decimalValue().scale()).isEqualTo(2);
    }

    @Test
    void rule8_the_objects_page_size_overrides_the_engines() {
        provider.object(ITEMS).thenReturn(response(5, "Diff", 0, inserts(1, 5)));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(items().pageSize(2), out);

        engine.runOnce();

        assertThat(out.batches()).extracting(b -> b.changes().size()).containsExactly(2, 2, 1);
    }
}
