package io.tidemark.sync.testkit;

import io.tidemark.sync.spi.CallContext;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds a scripted call "in the database" until the test releases it, or until the engine cancels it through
 * its {@link CallContext}, the way a provider cancels a running statement. Interrupting the calling thread does
 * not end the wait, just as it does not end a JDBC call blocked on its socket: only the cancel path the real
 * providers rely on does.
 */
public final class CallGate {

    /** A call never released fails after this, so that a broken test cannot hang the build. */
    private static final Duration LIMIT = Duration.ofSeconds(60);

    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean cancelled;
    private volatile boolean finished;

    /** Lets the held call go on and answer. */
    public void release() {
        released.countDown();
    }

    /** Waits until a call is held at the gate; false if none arrived in time. */
    public boolean awaitEntered(Duration timeout) throws InterruptedException {
        return entered.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Whether the engine cancelled the held call. */
    public boolean wasCancelled() {
        return cancelled;
    }

    /** Whether a held call has left the gate (released or cancelled). */
    public boolean finished() {
        return finished;
    }

    @SuppressWarnings("try") // the registration is held for the wait, never read
    void pass(CallContext context) {
        try (CallContext.Registration ignored = context.onCancel(this::cancel)) {
            entered.countDown(); // only now: a test that cancels once the call is held must reach it
            awaitUninterruptibly();
        } finally {
            finished = true;
        }
    }

    private void cancel() {
        cancelled = true;
        released.countDown();
    }

    private void awaitUninterruptibly() {
        long deadline = System.nanoTime() + LIMIT.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("a scripted call was held at its gate for " + LIMIT
                            + " and never released or cancelled");
                }
                try {
                    if (released.await(left, TimeUnit.NANOSECONDS)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
