package io.tidemark.benchmarks.capture;

import io.tidemark.benchmarks.ProcStat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Database CPU spent over a window by a group of server processes, from /proc (the embedded server runs on this
 * machine). Two groups are measured:
 * <ul>
 *   <li>{@link #backendsOf}: the backends whose {@code application_name} is given, found in
 *       {@code pg_stat_activity} at every {@link #sample()}: the engine's connections;</li>
 *   <li>{@link #wholeServer}: the postmaster and every process it started (backends, WAL writer, checkpointer,
 *       autovacuum), as a reference.</li>
 * </ul>
 * A process present when the window starts counts from there; one that appears during the window counts in full
 * (its whole life lies in the window); one that ends during the window counts up to the last sample that saw it,
 * and is reported in {@link #ended()}, so that a reader sees when figures are missing time.
 */
final class BackendCpu {

    private final Connection monitor;
    private final String applicationName;
    private final int postmaster;
    /** pid: {CPU milliseconds when the window started (0 if it appeared later), at the latest sample}. */
    private final Map<Integer, long[]> processes = new HashMap<>();
    private final Set<Integer> endedPids = new HashSet<>();
    private long startedNanos;
    private long stoppedNanos;

    private BackendCpu(Connection monitor, String applicationName, int postmaster) {
        this.monitor = monitor;
        this.applicationName = applicationName;
        this.postmaster = postmaster;
    }

    /** The backends connected under {@code applicationName}, looked up through {@code monitor}. */
    static BackendCpu backendsOf(Connection monitor, String applicationName) {
        return new BackendCpu(monitor, applicationName, -1);
    }

    /** Every process of the server whose postmaster is {@code postmaster}, the postmaster included. */
    static BackendCpu wholeServer(int postmaster) {
        return new BackendCpu(null, null, postmaster);
    }

    synchronized void start() throws SQLException, IOException {
        processes.clear();
        endedPids.clear();
        for (int pid : pids()) {
            long cpu = ProcStat.cpuMillis(pid);
            processes.put(pid, new long[] {cpu, cpu});
        }
        startedNanos = System.nanoTime();
    }

    /** Reads every process's CPU now; run it every second or so while the window is open. */
    synchronized void sample() throws SQLException {
        Set<Integer> now = pids();
        for (Map.Entry<Integer, long[]> e : processes.entrySet()) {
            if (!now.contains(e.getKey())) {
                endedPids.add(e.getKey());
            }
        }
        for (int pid : now) {
            try {
                long cpu = ProcStat.cpuMillis(pid);
                processes.computeIfAbsent(pid, p -> new long[] {0, 0})[1] = cpu;
            } catch (IOException ended) {
                endedPids.add(pid);
            }
        }
    }

    synchronized void stop() throws SQLException {
        sample();
        stoppedNanos = System.nanoTime();
    }

    /** CPU used in the window as a percentage of one core. */
    synchronized double percentOfCore() {
        long cpu = 0;
        for (long[] p : processes.values()) {
            cpu += p[1] - p[0];
        }
        return cpu * 100.0 / ((stoppedNanos - startedNanos) / 1e6);
    }

    synchronized int processes() {
        return processes.size();
    }

    synchronized int ended() {
        return endedPids.size();
    }

    private Set<Integer> pids() throws SQLException {
        return monitor != null ? backendPids() : serverPids();
    }

    private Set<Integer> backendPids() throws SQLException {
        Set<Integer> pids = new HashSet<>();
        try (PreparedStatement s = monitor.prepareStatement(
                "SELECT pid FROM pg_catalog.pg_stat_activity WHERE application_name = ?")) {
            s.setString(1, applicationName);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    pids.add(rs.getInt(1));
                }
            }
        }
        return pids;
    }

    private Set<Integer> serverPids() {
        Set<Integer> pids = new HashSet<>();
        pids.add(postmaster);
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            entries.map(p -> p.getFileName().toString()).filter(n -> n.chars().allMatch(Character::isDigit))
                    .map(Integer::parseInt).forEach(pid -> {
                        try {
                            if (ProcStat.parentPid(pid) == postmaster) {
                                pids.add(pid);
                            }
                        } catch (IOException | RuntimeException gone) {
                            // The process ended while /proc was listed: it is not one to sample.
                        }
                    });
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc: " + e, e);
        }
        return pids;
    }
}
