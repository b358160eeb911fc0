package io.tidemark.sync.internal.engine;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Builder validation: everything that can be refused before the first cycle is refused at build(). */
class EngineConfigTest {

    /** A provider that refuses names with a semicolon, like the real ones, and is never called here. */
    private static final ChangeProvider PROVIDER = new ChangeProvider() {
        @Override
        public String name() {
            return "test";
        }

        @Override
        public void validate(TrackedObject object) {
            if (object.procedure().contains(";")) {
                throw TidemarkException.forObject(ErrorCode.INVALID_IDENTIFIER, object.name(), "bad name");
            }
        }

        @Override
        public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
            throw new AssertionError("build() must not call the procedure");
        }

        @Override
        public OptionalLong currentVersion(TrackedObject object) {
            throw new AssertionError("build() must not read a watermark");
        }
    };

    private static SyncEngine.Builder valid() {
        return SyncEngine.builder().provider(PROVIDER).watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("A", "p")).destination("d", batch -> { });
    }

    private static void refused(UnaryOperator<SyncEngine.Builder> change, ErrorCode code, String message) {
        assertThatThrownBy(() -> change.apply(valid()).build())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining(message)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(code));
    }

    @Test
    void a_valid_configuration_builds_without_touching_the_database() {
        try (SyncEngine engine = valid().build()) {
            assertThat(engine.trackedObjects()).extracting(TrackedObject::name).containsExactly("A");
        }
    }

    @Test
    void refuses_what_is_missing_or_wrong() {
        refused(b -> b.provider(null), ErrorCode.INVALID_CONFIGURATION, "needs a provider");
        refused(b -> b.watermarks(null), ErrorCode.INVALID_CONFIGURATION, "watermark store");
        refused(b -> b.track(TrackedObject.of("A", "q")), ErrorCode.INVALID_CONFIGURATION, "Two tracked objects are named 'A'");
        refused(b -> b.destination("d", batch -> { }), ErrorCode.INVALID_CONFIGURATION, "Two destinations are named 'd'");
        refused(b -> b.pollInterval(Duration.ZERO), ErrorCode.INVALID_CONFIGURATION, "pollInterval");
        refused(b -> b.pageSize(0), ErrorCode.INVALID_CONFIGURATION, "pageSize");
        refused(b -> b.threads(0), ErrorCode.INVALID_CONFIGURATION, "threads");
        refused(b -> b.shutdownTimeout(Duration.ofSeconds(-1)), ErrorCode.INVALID_CONFIGURATION, "shutdownTimeout");
        refused(b -> b.name(" "), ErrorCode.INVALID_CONFIGURATION, "name");
        refused(b -> b.destination("x", batch -> { }, DeliveryPolicy.deadLetterAfter(2, Duration.ZERO)),
                ErrorCode.INVALID_CONFIGURATION, "no dead-letter store");
        refused(b -> b.track(TrackedObject.of("B", "x; drop table y")), ErrorCode.INVALID_CONFIGURATION,
                "[B] bad name");
        assertThatThrownBy(() -> SyncEngine.builder().provider(PROVIDER).watermarks(InMemoryWatermarkStore.create())
                .destination("d", batch -> { }).build()).hasMessageContaining("Track at least one object");
        assertThatThrownBy(() -> SyncEngine.builder().provider(PROVIDER).watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("A", "p")).build()).hasMessageContaining("at least one destination");
        assertThatThrownBy(() -> valid().destination(" ", batch -> { }).build()).hasMessageContaining("non-blank name");
    }

    @Test
    void every_problem_is_reported_at_once_by_build() {
        SyncEngine.Builder builder = SyncEngine.builder()
                .provider(null)
                .watermarks(null)
                .track(null)
                .track(TrackedObject.of("Items", "p").maxRows(0).pageSize(-1).pollInterval(Duration.ZERO))
                .track(TrackedObject.of(" ", "p"))
                .track(TrackedObject.of("A\nB", "p"))
                .track(TrackedObject.of("Orders", " ").initialSync(null).table(" "))
                .destination(null, null, null)
                .listener(null)
                .pollInterval(null)
                .pageSize(0)
                .threads(0)
                .shutdownTimeout(Duration.ofSeconds(-1))
                .clock(null)
                .name(" ");

        assertThatThrownBy(builder::build)
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("SyncEngine has 21 configuration problems:")
                .hasMessageContaining("name must not be blank")
                .hasMessageContaining("needs a provider")
                .hasMessageContaining("needs a watermark store")
                .hasMessageContaining("pollInterval must be a positive duration, got null")
                .hasMessageContaining("pageSize must be at least 1, got 0")
                .hasMessageContaining("shutdownTimeout must be zero or positive")
                .hasMessageContaining("clock must not be null")
                .hasMessageContaining("threads must be at least 1, got 0")
                .hasMessageContaining("track(...) was given null")
                .hasMessageContaining("listener(...) was given null")
                .hasMessageContaining("[Items] maxRows must be at least 1, got 0")
                .hasMessageContaining("[Items] pageSize must be at least 1, got -1")
                .hasMessageContaining("[Items] pollInterval must be a positive duration, got PT0S")
                .hasMessageContaining("A tracked object needs a non-blank name, got ' '")
                .hasMessageContaining("control character")
                .hasMessageContaining("[Orders] needs the name of its change procedure or function")
                .hasMessageContaining("[Orders] initialSync must not be null")
                .hasMessageContaining("[Orders] table must not be blank")
                .hasMessageContaining("A destination needs a non-blank name, got null")
                .hasMessageContaining("Destination 'null' is null")
                .hasMessageContaining("Destination 'null' needs a delivery policy");
    }

    @Test
    void a_delivery_policy_reports_both_of_its_problems() {
        assertThatThrownBy(() -> DeliveryPolicy.retryThenBlock(0, null))
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("DeliveryPolicy has 2 configuration problems")
                .hasMessageContaining("maxAttempts must be at least 1, got 0")
                .hasMessageContaining("backoff must be zero or positive, got null");
    }
}
