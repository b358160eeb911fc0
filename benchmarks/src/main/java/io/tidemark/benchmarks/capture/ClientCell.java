package io.tidemark.benchmarks.capture;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One measurement, pgbench style: {@code clients} threads, each with its own connection (auto-commit) and prepared
 * statement, run one workload against one table for a fixed time. Connecting and preparing happen before the clock
 * starts.
 */
final class ClientCell {

    /** Statements per second, and whether the workload ran out of rows before the time was up. */
    record Result(double perSecond, boolean exhausted) {
    }

    private ClientCell() {
    }

    static Result run(DataSource writers, BenchTable table, Workload workload, int clients, Duration duration)
            throws Exception {
        CountDownLatch connected = new CountDownLatch(clients);
        CountDownLatch go = new CountDownLatch(1);
        AtomicLong statements = new AtomicLong();
        AtomicLong lastFinish = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] window = new long[2]; // start, deadline: written before go is released, read after it
        AtomicBoolean exhausted = new AtomicBoolean();
        String sql = workload.sql(table);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            Thread thread = new Thread(() -> {
                try (Connection c = writers.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
                    connected.countDown();
                    go.await();
                    long done = 0;
                    while (System.nanoTime() < window[1]) {
                        if (!workload.bind(s, table)) {
                            exhausted.set(true);
                            break;
                        }
                        int rows = s.executeUpdate();
                        if (rows != workload.rows()) {
                            throw new IllegalStateException(workload.label() + " on " + table.name() + " changed "
                                    + rows + " rows, not " + workload.rows());
                        }
                        done++;
                    }
                    long finished = System.nanoTime();
                    statements.addAndGet(done);
                    lastFinish.accumulateAndGet(finished, Math::max);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    connected.countDown();
                }
            }, "writer-" + i);
            thread.start();
            threads.add(thread);
        }
        connected.await();
        window[0] = System.nanoTime();
        window[1] = window[0] + duration.toNanos();
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(workload.label() + " on " + table.name() + " failed: " + failure.get(),
                    failure.get());
        }
        double seconds = (lastFinish.get() - window[0]) / 1e9;
        return new Result(statements.get() / seconds, exhausted.get());
    }
}
