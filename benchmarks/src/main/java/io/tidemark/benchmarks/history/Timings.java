package io.tidemark.benchmarks.history;

import java.util.Arrays;

/** Per-statement latencies of one configuration, in microseconds. */
final class Timings {

    private final long[] nanos;
    private int n;

    Timings(int capacity) {
        this.nanos = new long[capacity];
    }

    void add(long elapsedNanos) {
        nanos[n++] = elapsedNanos;
    }

    double medianMicros() {
        return percentile(0.5);
    }

    double p90Micros() {
        return percentile(0.9);
    }

    private double percentile(double p) {
        long[] sorted = Arrays.copyOf(nanos, n);
        Arrays.sort(sorted);
        return sorted[Math.min(n - 1, (int) Math.floor(p * (n - 1)))] / 1000.0;
    }
}
