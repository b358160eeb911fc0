package io.tidemark.sync.testkit;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A {@link ChangeProvider} with no database behind it: each object (by {@link TrackedObject#name()}) answers from
 * a script the test writes, and every request the engine sends is recorded. It lets core test the engine's rules
 * in milliseconds; the real providers prove the same rules end to end in their own modules.
 *
 * <pre>{@code
 * ScriptedProvider provider = new ScriptedProvider();
 * provider.object("Items")
 *         .thenReturn(Responses.response(3, "Diff", 0, Responses.row("I", 3, "\"Id\":1")))
 *         .thenFail(new SQLException("deadlock detected", "40P01"));
 * ... engine.runOnce() ...
 * assertThat(provider.calls("Items")).containsExactly("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}", ...);
 * }</pre>
 *
 * <p>Responses go through the {@link ResponsePayload} SPI the way the real providers hand them over: as the
 * driver's UTF-8 bytes (PostgreSQL, the default), as a {@code String}, or spooled from a stream (SQL Server's
 * chunked {@code FOR JSON}); see {@link PayloadForm}. A {@code null} body is a SQL NULL, which the PostgreSQL
 * provider hands over as an empty payload. Steps run in order; once the queued steps are used up, the object's
 * {@linkplain ObjectScript#respondWith responder} answers, and without one the call fails as a change function
 * with nothing left to say would ({@link ErrorCode#PROCEDURE_FAILED}).
 *
 * <p>Written against the public SPI only, so it could move to the testing module unchanged. Thread-safe.
 */
public final class ScriptedProvider implements ChangeProvider {

    /** How a response reaches the engine, after the ways the real providers create their payloads. */
    public enum PayloadForm {
        /** {@link ResponsePayload#ofUtf8}: the driver's own bytes (PostgreSQL). */
        UTF8_BYTES,
        /** {@link ResponsePayload#ofString}: a driver that holds a {@code String}. */
        STRING,
        /** {@link ResponsePayload#spool}: a character stream copied to a spool (SQL Server). */
        SPOOLED
    }

    private final Map<String, ObjectScript> scripts = new HashMap<>();
    private final List<Consumer<String>> subscribers = new ArrayList<>();
    private PayloadForm form = PayloadForm.UTF8_BYTES;

    /** Hands responses over in the given form from now on; {@link PayloadForm#UTF8_BYTES} unless set. */
    public synchronized ScriptedProvider payloadForm(PayloadForm form) {
        this.form = form;
        return this;
    }

    /** The script of the object with this name, created empty on first use. */
    public synchronized ObjectScript object(String objectName) {
        return scripts.computeIfAbsent(objectName, ObjectScript::new);
    }

    /** Every request the object's procedure received, in order. */
    public List<ChangeRequest> requests(String objectName) {
        return object(objectName).requests();
    }

    /** Every request the object's procedure received, in order, as the JSON text a real procedure is given. */
    public List<String> calls(String objectName) {
        return requests(objectName).stream().map(ChangeRequest::toJson).toList();
    }

    /**
     * Signals "changes arrived" for the object to every engine subscribed, as a database notification
     * (PostgreSQL's LISTEN) would.
     */
    public void notifyChanges(String objectName) {
        List<Consumer<String>> targets;
        synchronized (this) {
            targets = List.copyOf(subscribers);
        }
        targets.forEach(wakeUp -> wakeUp.accept(objectName));
    }

    @Override
    public String name() {
        return "scripted";
    }

    /** Accepts every object: there is no procedure name a scripted provider could not call. */
    @Override
    public void validate(TrackedObject object) {
    }

    @Override
    public ResponsePayload invoke(TrackedObject object, ChangeRequest request, CallContext context) {
        PayloadForm payloadForm;
        synchronized (this) {
            payloadForm = form;
        }
        byte[] body = object(object.name()).answer(object, request, context);
        return payload(body, payloadForm);
    }

    @Override
    public OptionalLong currentVersion(TrackedObject object) {
        return object(object.name()).currentVersion();
    }

    @Override
    public synchronized AutoCloseable subscribe(Collection<TrackedObject> objects, Consumer<String> wakeUp) {
        subscribers.add(wakeUp);
        return () -> {
            synchronized (ScriptedProvider.this) {
                subscribers.remove(wakeUp);
            }
        };
    }

    private static ResponsePayload payload(byte[] body, PayloadForm form) {
        byte[] utf8 = body == null ? new byte[0] : body;
        switch (form) {
            case STRING:
                return ResponsePayload.ofString(new String(utf8, StandardCharsets.UTF_8));
            case SPOOLED:
                try {
                    return ResponsePayload.spool(new StringReader(new String(utf8, StandardCharsets.UTF_8)));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            default:
                return ResponsePayload.ofUtf8(utf8);
        }
    }

    private static byte[] utf8(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    /** What one object's procedure answers, step by step, and what it was asked. */
    public static final class ObjectScript {

        private final String objectName;
        private final Deque<Step> steps = new ArrayDeque<>();
        private final List<ChangeRequest> requests = new ArrayList<>();
        private Function<ChangeRequest, String> responder;
        private OptionalLong currentVersion = OptionalLong.empty();

        private ObjectScript(String objectName) {
            this.objectName = objectName;
        }

        /** Answers the next call with this JSON text ({@code null} for a SQL NULL). */
        public synchronized ObjectScript thenReturn(String body) {
            byte[] bytes = utf8(body);
            steps.add((object, request, context) -> bytes);
            return this;
        }

        /**
         * Answers the next call with these bytes as the driver's UTF-8, byte for byte in the default form (to
         * script invalid UTF-8 too).
         */
        public synchronized ObjectScript thenReturnUtf8(byte[] body) {
            byte[] bytes = body.clone();
            steps.add((object, request, context) -> bytes);
            return this;
        }

        /** Fails the next call with this error, as a provider reports what went wrong. */
        public synchronized ObjectScript thenFail(TidemarkException error) {
            steps.add((object, request, context) -> {
                throw error;
            });
            return this;
        }

        /**
         * Fails the next call as a provider reports a driver error it has no better code for: a
         * {@link ErrorCode#PROCEDURE_FAILED} naming the object, with the driver's exception as the cause.
         */
        public synchronized ObjectScript thenFail(SQLException error) {
            steps.add((object, request, context) -> {
                throw TidemarkException.forObject(ErrorCode.PROCEDURE_FAILED, object.name(),
                        "calling " + object.procedure() + " failed: " + error.getMessage()
                                + " (SQLState " + error.getSQLState() + ")", error);
            });
            return this;
        }

        /**
         * Blocks the next call in the "database" until the gate is released, then answers {@code body}. Like a
         * JDBC call, it does not stop on a thread interrupt: only the engine's cancellation ({@link CallContext})
         * ends it early, with the {@link ErrorCode#ENGINE_STATE} error a real provider reports for a cancel.
         */
        public synchronized ObjectScript thenBlock(CallGate gate, String body) {
            steps.add((object, request, context) -> {
                gate.pass(context);
                if (context.isCancelled()) {
                    throw TidemarkException.forObject(ErrorCode.ENGINE_STATE, object.name(), "the call to "
                            + object.procedure() + " was cancelled because the engine is closing; the watermark"
                            + " stays.");
                }
                return utf8(body);
            });
            return this;
        }

        /** Answers every call after the queued steps from the request, as a real change function would. */
        public synchronized ObjectScript respondWith(Function<ChangeRequest, String> responder) {
            this.responder = responder;
            return this;
        }

        /**
         * The server's own current version, for the first cycle of an incremental object (SQL Server Change
         * Tracking); without it the engine asks the procedure with {@code mode: "seed"}.
         */
        public synchronized ObjectScript currentVersion(long version) {
            this.currentVersion = OptionalLong.of(version);
            return this;
        }

        /** The requests received, in order. */
        public synchronized List<ChangeRequest> requests() {
            return List.copyOf(requests);
        }

        /** How many queued steps have not been used yet. */
        public synchronized int remainingSteps() {
            return steps.size();
        }

        private synchronized OptionalLong currentVersion() {
            return currentVersion;
        }

        private byte[] answer(TrackedObject object, ChangeRequest request, CallContext context) {
            Step step;
            synchronized (this) {
                requests.add(request);
                step = steps.poll();
                if (step == null && responder != null) {
                    Function<ChangeRequest, String> answer = responder;
                    step = (o, r, c) -> utf8(answer.apply(r));
                }
            }
            if (step == null) {
                throw TidemarkException.forObject(ErrorCode.PROCEDURE_FAILED, object.name(),
                        "no scripted response left for " + objectName + " (request " + request + ")");
            }
            // Run outside the lock: a blocked call must not stop the test from reading what was asked.
            return step.answer(object, request, context);
        }
    }

    @FunctionalInterface
    private interface Step {
        byte[] answer(TrackedObject object, ChangeRequest request, CallContext context);
    }
}
