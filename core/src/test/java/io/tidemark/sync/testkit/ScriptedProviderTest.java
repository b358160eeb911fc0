package io.tidemark.sync.testkit;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The scripted provider itself: the engine's tests are only as good as the stand-in they run against. */
class ScriptedProviderTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "public.items_changes");
    private static final TrackedObject ORDERS = TrackedObject.of("Orders", "public.orders_changes");

    private final ScriptedProvider provider = new ScriptedProvider();

    private static String text(ResponsePayload payload) {
        try (payload) {
            return payload.head(Integer.MAX_VALUE);
        }
    }

    @ParameterizedTest
    @EnumSource(ScriptedProvider.PayloadForm.class)
    void answers_each_object_from_its_own_script_in_order_and_records_what_it_was_asked(ScriptedProvider.PayloadForm form) {
        provider.payloadForm(form);
        provider.object("Items").thenReturn("{\"a\":1}").thenReturn("{\"a\":2}");
        provider.object("Orders").thenReturn("{\"b\":\"ä\"}");

        assertThat(text(provider.invoke(ITEMS, ChangeRequest.initialFull(OptionalInt.of(10)), CallContext.none())))
                .isEqualTo("{\"a\":1}");
        assertThat(text(provider.invoke(ORDERS, ChangeRequest.seed(), CallContext.none()))).isEqualTo("{\"b\":\"ä\"}");
        assertThat(text(provider.invoke(ITEMS, ChangeRequest.sync(7), CallContext.none()))).isEqualTo("{\"a\":2}");

        assertThat(provider.calls("Items")).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true,\"maxRows\":10}",
                "{\"fromVersion\":7,\"mode\":\"sync\"}");
        assertThat(provider.requests("Orders")).singleElement()
                .satisfies(r -> assertThat(r.mode()).isEqualTo(ChangeRequest.Mode.SEED));
        assertThat(provider.object("Items").remainingSteps()).isZero();
    }

    @Test
    void hands_over_bytes_as_the_postgres_driver_does_and_null_as_an_empty_payload() {
        provider.object("Items").thenReturn("{\"Name\":\"ä\"}").thenReturn(null);

        try (ResponsePayload bytes = provider.invoke(ITEMS, ChangeRequest.sync(0), CallContext.none());
             ResponsePayload none = provider.invoke(ITEMS, ChangeRequest.sync(0), CallContext.none())) {
            assertThat(bytes.sizeUnit()).isEqualTo("bytes");
            assertThat(bytes.size()).isEqualTo(13);
            assertThat(none.isBlank()).isTrue();
            assertThat(none.size()).isZero();
        }
    }

    @Test
    void fails_with_the_scripted_error_and_when_the_script_is_used_up() {
        TidemarkException denied = TidemarkException.forObject(ErrorCode.PERMISSION_DENIED, "Items", "denied");
        provider.object("Items").thenFail(denied).thenFail(new SQLException("deadlock detected", "40P01"));

        assertThatThrownBy(() -> provider.invoke(ITEMS, ChangeRequest.sync(1), CallContext.none())).isSameAs(denied);
        assertThatThrownBy(() -> provider.invoke(ITEMS, ChangeRequest.sync(1), CallContext.none()))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("deadlock detected")
                .hasCauseInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.PROCEDURE_FAILED));
        assertThatThrownBy(() -> provider.invoke(ITEMS, ChangeRequest.sync(1), CallContext.none()))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("no scripted response left for Items");
        assertThat(provider.calls("Items")).hasSize(3);
    }

    @Test
    void a_responder_answers_from_the_request_once_the_queued_steps_are_used() {
        provider.object("Items").thenReturn("first").respondWith(r -> "from " + r.fromVersion());

        assertThat(text(provider.invoke(ITEMS, ChangeRequest.sync(1), CallContext.none()))).isEqualTo("first");
        assertThat(text(provider.invoke(ITEMS, ChangeRequest.sync(2), CallContext.none()))).isEqualTo("from 2");
        assertThat(text(provider.invoke(ITEMS, ChangeRequest.sync(3), CallContext.none()))).isEqualTo("from 3");
    }

    @Test
    void versioned_rows_honour_max_rows_unless_told_to_ignore_it() {
        VersionedRows honouring = VersionedRows.honouringMaxRows().insert(1, 5);
        VersionedRows ignoring = VersionedRows.ignoringMaxRows().insert(1, 5);

        assertThat(honouring.apply(ChangeRequest.sync(1, OptionalInt.of(2)))).isEqualTo(Responses.response(3, "Diff", 0,
                Responses.row("I", 2, "\"Body\":\"row 2\""), Responses.row("I", 3, "\"Body\":\"row 3\"")));
        assertThat(ignoring.apply(ChangeRequest.sync(3, OptionalInt.of(1)))).isEqualTo(Responses.response(5, "Diff", 0,
                Responses.row("I", 4, "\"Body\":\"row 4\""), Responses.row("I", 5, "\"Body\":\"row 5\"")));
        assertThat(honouring.apply(ChangeRequest.sync(5))).isEqualTo(Responses.response(5, "Diff", 0));
    }

    @Test
    void a_held_call_ignores_interrupts_and_ends_on_release() throws Exception {
        CallGate gate = new CallGate();
        provider.object("Items").thenBlock(gate, "{\"done\":true}");
        FutureTask<String> call = new FutureTask<>(
                () -> text(provider.invoke(ITEMS, ChangeRequest.sync(0), CallContext.none())));
        Thread caller = new Thread(call, "held-caller");
        caller.start();
        assertThat(gate.awaitEntered(Duration.ofSeconds(10))).isTrue();

        caller.interrupt();
        Thread.sleep(50);
        assertThat(call.isDone()).isFalse();

        gate.release();
        assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("{\"done\":true}");
        assertThat(gate.wasCancelled()).isFalse();
    }

    @Test
    void a_held_call_ends_with_the_cancel_error_when_its_context_is_cancelled() throws Exception {
        CallGate gate = new CallGate();
        provider.object("Items").thenBlock(gate, "{}");
        CancellableContext context = new CancellableContext();
        CompletableFuture<ResponsePayload> call =
                CompletableFuture.supplyAsync(() -> provider.invoke(ITEMS, ChangeRequest.sync(0), context));
        assertThat(gate.awaitEntered(Duration.ofSeconds(10))).isTrue();

        context.cancel();

        assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(TidemarkException.class)
                .cause().satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.ENGINE_STATE));
        assertThat(gate.wasCancelled()).isTrue();
    }

    @Test
    void change_notifications_reach_subscribers_until_they_unsubscribe() throws Exception {
        List<String> woken = new CopyOnWriteArrayList<>();
        AutoCloseable subscription = provider.subscribe(List.of(ITEMS), woken::add);

        provider.notifyChanges("Items");
        subscription.close();
        provider.notifyChanges("Items");

        assertThat(woken).containsExactly("Items");
    }

    /** A context cancelled by the test, running the registered actions as the engine's does. */
    private static final class CancellableContext implements CallContext {
        private final List<Runnable> actions = new CopyOnWriteArrayList<>();
        private volatile boolean cancelled;

        @Override
        public Registration onCancel(Runnable cancelAction) {
            actions.add(cancelAction);
            if (cancelled) {
                cancelAction.run();
            }
            return () -> actions.remove(cancelAction);
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        void cancel() {
            cancelled = true;
            actions.forEach(Runnable::run);
        }
    }
}
