package io.tidemark.sync.internal.engine;

import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.Destination;
import io.tidemark.sync.spi.ResponsePayload;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.PositionAdvance;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one cycle does around the rules: a provider that breaks its contract, listeners and diagnostics that
 * fail, the cycle cancelled between pages, the times it stores. The rules themselves are tested through the
 * public engine (io.tidemark.sync.VersionRulesTest and neighbours).
 */
class CycleRunnerTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "public.items_changes");
    private static final Instant NOW = Instant.parse("2026-03-04T05:06:07Z");

    private final ScriptedProvider scripted = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();
    private final RecordingDestination out = new RecordingDestination();
    private final List<SyncListener> listeners = new ArrayList<>();
    private final EngineCallContext calls = new EngineCallContext();

    private CycleRunner runner(ChangeProvider provider) {
        return runner(provider, out);
    }

    /** The one place that builds the configuration, pages of 2 changes and a fixed clock. */
    private CycleRunner runner(ChangeProvider provider, Destination destination) {
        EngineConfig config = new EngineConfig("test", provider, store, null, List.of(ITEMS),
                List.of(new NamedDestination("out", destination, DeliveryPolicy.block())), listeners,
                Duration.ofSeconds(30), 2, null, Duration.ofSeconds(30), Clock.fixed(NOW, ZoneOffset.UTC));
        return new CycleRunner(config, calls);
    }

    @Test
    void a_provider_that_throws_something_other_than_a_tidemark_exception_fails_the_cycle_as_internal() {
        ChangeProvider broken = new DelegatingProvider(scripted) {
            @Override
            public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
                throw new IllegalStateException("provider bug");
            }
        };

        ObjectReport report = runner(broken).run(ITEMS);

        assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(report.error().orElseThrow().code()).isEqualTo(ErrorCode.INTERNAL);
        assertThat(report.error().orElseThrow().getMessage()).contains("Items").contains("provider bug");
        assertThat(out.offered()).isZero();
        assertThat(store.load("Items").orElseThrow().version()).isEmpty();
    }

    @Test
    void a_failing_listener_or_diagnostic_does_not_change_the_outcome() {
        scripted.object("Items").thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")));
        listeners.add(new SyncListener() {
            @Override
            public void onReport(ObjectReport report) {
                throw new IllegalStateException("listener bug");
            }
        });
        ChangeProvider failingDiagnostics = new DelegatingProvider(scripted) {
            @Override
            public List<Diagnostic> diagnose(TrackedObject object, OptionalLong storedVersion) {
                throw new IllegalStateException("diagnostics bug");
            }
        };

        ObjectReport report = runner(failingDiagnostics).run(ITEMS);

        assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(report.diagnostics()).isEmpty();
        assertThat(store.load("Items").orElseThrow().version()).hasValue(3);
    }

    @Test
    void a_cycle_cancelled_between_pages_delivers_no_further_page_and_keeps_the_watermark() {
        scripted.object("Items").thenReturn(response(4, "Diff", 0,
                row("I", 1, "\"Id\":1"), row("I", 2, "\"Id\":2"), row("I", 3, "\"Id\":3"), row("I", 4, "\"Id\":4")));
        Destination closingDuringPageOne = batch -> {
            out.deliver(batch);
            calls.cancel(); // the engine starts closing while page 1 is delivered
        };

        ObjectReport report = runner(scripted, closingDuringPageOne).run(ITEMS);

        assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(report.error().orElseThrow().code()).isEqualTo(ErrorCode.ENGINE_STATE);
        assertThat(out.batches()).extracting(b -> b.pageNumber()).containsExactly(1);
        assertThat(store.load("Items").orElseThrow().version()).isEmpty();
    }

    @Test
    void the_clock_stamps_what_is_stored() {
        scripted.object("Items").thenReturn(response(3, "Diff", 0, row("I", 3, "\"Id\":1")));

        ObjectReport report = runner(scripted).run(ITEMS);

        assertThat(report.startedAt()).isEqualTo(NOW);
        assertThat(store.load("Items").orElseThrow().lastMovedAt()).hasValue(NOW);
        assertThat(store.load("Items").orElseThrow().lastPolledAt()).hasValue(NOW);
    }

    @Test
    void the_store_is_written_when_the_version_moves_or_the_error_changes_and_not_at_every_poll() {
        List<String> writes = new ArrayList<>();
        WatermarkStore counting = new ForwardingWatermarkStore() {
            @Override
            public void advance(String objectName, String source, OptionalLong expected, long newVersion,
                                List<PositionAdvance> positions, Instant at) {
                writes.add("advance " + newVersion);
                super.advance(objectName, source, expected, newVersion, positions, at);
            }

            @Override
            public void recordPoll(String objectName, Instant at, String error) {
                writes.add("error " + (error == null ? "cleared" : error.substring(0, error.indexOf(':'))));
                super.recordPoll(objectName, at, error);
            }
        };
        TidemarkException broken = TidemarkException.forObject(ErrorCode.PROCEDURE_FAILED, "Items", "boom");
        scripted.object("Items")
                .thenReturn(response(3, "Diff", 0))
                .thenReturn(response(3, "Diff", 0))
                .thenFail(broken).thenFail(broken).thenFail(broken)
                .thenFail(TidemarkException.forObject(ErrorCode.PERMISSION_DENIED, "Items", "denied"))
                .thenReturn(response(3, "Diff", 0))
                .thenReturn(response(3, "Diff", 0))
                .thenReturn(response(4, "Diff", 0, row("I", 4, "\"Id\":1")));
        EngineConfig config = new EngineConfig("test", scripted, counting, null, List.of(ITEMS),
                List.of(new NamedDestination("out", out, DeliveryPolicy.block())), listeners,
                Duration.ofSeconds(30), 2, null, Duration.ofSeconds(30), Clock.fixed(NOW, ZoneOffset.UTC));
        CycleRunner runner = new CycleRunner(config, calls);

        for (int i = 0; i < 9; i++) {
            runner.run(ITEMS);
        }

        assertThat(writes).containsExactly("advance 3", "error PROCEDURE_FAILED", "error PERMISSION_DENIED",
                "error cleared", "advance 4");
        assertThat(runner.lastPolled("Items")).hasValue(NOW);
    }

    /** Passes every call to another provider; tests override the one call they break. */
    private static class DelegatingProvider implements ChangeProvider {
        private final ChangeProvider delegate;

        DelegatingProvider(ChangeProvider delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public void validate(TrackedObject object) {
            delegate.validate(object);
        }

        @Override
        public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
            return delegate.invoke(object, request, context);
        }

        @Override
        public OptionalLong currentVersion(TrackedObject object) {
            return delegate.currentVersion(object);
        }

        @Override
        public List<Diagnostic> diagnose(TrackedObject object, OptionalLong storedVersion) {
            return delegate.diagnose(object, storedVersion);
        }
    }
}
