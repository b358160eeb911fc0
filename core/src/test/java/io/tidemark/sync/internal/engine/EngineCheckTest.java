package io.tidemark.sync.internal.engine;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryDeadLetterStore;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

/** The engine's start-up check gathers every component's problems; each component fails on its own. */
class EngineCheckTest {

    /** A provider whose check reports a missing procedure for every object named "missing". */
    private static final class CheckedProvider implements ChangeProvider {
        @Override
        public String name() {
            return "scripted";
        }

        @Override
        public void validate(TrackedObject object) {
        }

        @Override
        public List<CheckReport.Problem> check(Collection<TrackedObject> objects) {
            return objects.stream().filter(o -> o.procedure().startsWith("missing"))
                    .map(o -> new CheckReport.Problem(o.name(), ErrorCode.PROCEDURE_NOT_FOUND, o.procedure() + " is missing"))
                    .toList();
        }

        @Override
        public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
            throw new AssertionError("the check must not call a procedure");
        }

        @Override
        public OptionalLong currentVersion(TrackedObject object) {
            throw new AssertionError("the check must not read a version");
        }
    }

    /** A store whose check fails the way an unreachable database does. */
    private static final class UnreachableStore extends ForwardingWatermarkStore {
        @Override
        public List<CheckReport.Problem> check() {
            throw new TidemarkException(ErrorCode.CONNECTION_FAILED, "connection refused");
        }
    }

    @Test
    void every_component_and_object_is_in_one_report() {
        SyncEngine engine = SyncEngine.builder().provider(new CheckedProvider())
                .watermarks(new UnreachableStore())
                .deadLetters(InMemoryDeadLetterStore.create())
                .track(TrackedObject.of("A", "missing_a"))
                .track(TrackedObject.of("B", "present_b"))
                .track(TrackedObject.of("C", "missing_c"))
                .destination("d", batch -> { })
                .build();

        CheckReport report = engine.check();

        assertThat(report.problems()).extracting(CheckReport.Problem::subject, CheckReport.Problem::code)
                .containsExactly(tuple("A", ErrorCode.PROCEDURE_NOT_FOUND), tuple("C", ErrorCode.PROCEDURE_NOT_FOUND),
                        tuple("watermark store", ErrorCode.CONNECTION_FAILED));
        assertThat(report.toString()).contains("[watermark store] CONNECTION_FAILED: connection refused");
    }

    @Test
    void check_on_build_refuses_to_build_and_lists_every_problem() {
        assertThatThrownBy(() -> SyncEngine.builder().provider(new CheckedProvider())
                .watermarks(new UnreachableStore())
                .track(TrackedObject.of("A", "missing_a"))
                .destination("d", batch -> { })
                .name("orders")
                .checkOnBuild(true)
                .build())
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.CHECK_FAILED))
                .hasMessage("The engine 'orders' found 2 problems at its start-up check:\n"
                        + "  - [A] PROCEDURE_NOT_FOUND: missing_a is missing\n"
                        + "  - [watermark store] CONNECTION_FAILED: connection refused");
    }

    @Test
    void a_sound_engine_checks_clean_and_builds_with_the_check() {
        SyncEngine engine = SyncEngine.builder().provider(new CheckedProvider())
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("B", "present_b"))
                .destination("d", batch -> { })
                .checkOnBuild(true)
                .build();
        assertThat(engine.check().isOk()).isTrue();
        assertThat(engine.check().toString()).isEqualTo("CheckReport[ok]");
    }
}
