package io.tidemark.testing;

import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * What {@link ProcedureContractVerifier} found: one verdict per scenario, each with its findings and a transcript
 * of what was done and what the function answered. Use {@link #assertSafe()} in a test.
 */
public final class ContractReport {

    /** The verdict of one scenario. */
    public enum Verdict {
        /** The function did what the contract requires. */
        SAFE,
        /** The function broke the contract: a change was lost, misordered, or the response was unusable. */
        UNSAFE,
        /** The scenario could not run: one of the row actions given to the verifier failed. */
        ERROR
    }

    /** One scenario's outcome. */
    public static final class Scenario {
        private final String id;
        private final String title;
        private final Verdict verdict;
        private final List<String> findings;
        private final List<String> transcript;

        public Scenario(String id, String title, Verdict verdict, List<String> findings, List<String> transcript) {
            this.id = Objects.requireNonNull(id, "id");
            this.title = Objects.requireNonNull(title, "title");
            this.verdict = Objects.requireNonNull(verdict, "verdict");
            this.findings = List.copyOf(findings);
            this.transcript = List.copyOf(transcript);
        }

        /** A stable id, such as {@code in-flight-interleaving}. */
        public String id() {
            return id;
        }

        /** What the scenario checks, in one sentence. */
        public String title() {
            return title;
        }

        public Verdict verdict() {
            return verdict;
        }

        /** Why the verdict is not SAFE (empty when it is). */
        public List<String> findings() {
            return findings;
        }

        /** The steps taken and the function's answers, in order. */
        public List<String> transcript() {
            return transcript;
        }

        @Override
        public String toString() {
            return String.format("%-7s %-24s %s", verdict, id, title);
        }
    }

    private final String function;
    private final List<Scenario> scenarios;

    public ContractReport(String function, List<Scenario> scenarios) {
        this.function = Objects.requireNonNull(function, "function");
        this.scenarios = List.copyOf(scenarios);
    }

    /** The function verified. */
    public String function() {
        return function;
    }

    public List<Scenario> scenarios() {
        return scenarios;
    }

    /** The scenario with this id. */
    public Scenario scenario(String id) {
        return scenarios.stream().filter(s -> s.id().equals(id)).findFirst()
                .orElseThrow(() -> new NoSuchElementException("no scenario " + id + "; the scenarios are "
                        + scenarios.stream().map(Scenario::id).toList()));
    }

    /** True when every scenario is {@link Verdict#SAFE}. */
    public boolean isSafe() {
        return scenarios.stream().allMatch(s -> s.verdict() == Verdict.SAFE);
    }

    /** @throws AssertionError describing every scenario that is not SAFE, with its findings and transcript */
    public void assertSafe() {
        if (!isSafe()) {
            throw new AssertionError(describe(true));
        }
    }

    /** A table of the verdicts; with {@code details}, the findings and transcripts of what is not SAFE. */
    public String describe(boolean details) {
        long failed = scenarios.stream().filter(s -> s.verdict() != Verdict.SAFE).count();
        StringBuilder out = new StringBuilder("Procedure contract of ").append(function).append(": ")
                .append(failed == 0 ? "SAFE on every scenario" : "NOT SAFE (" + failed + " of " + scenarios.size()
                        + " scenarios failed)").append('\n');
        for (Scenario s : scenarios) {
            out.append("  ").append(s).append('\n');
            if (details && s.verdict() != Verdict.SAFE) {
                s.findings().forEach(f -> out.append("          - ").append(f).append('\n'));
                out.append("          transcript:\n").append(s.transcript().stream()
                        .map(line -> "            " + line).collect(Collectors.joining("\n"))).append('\n');
            }
        }
        return out.toString();
    }

    @Override
    public String toString() {
        return describe(true);
    }
}
