package io.tidemark.testing.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;
import io.tidemark.testing.ContractReport;
import io.tidemark.testing.ProcedureContractVerifier.RowAction;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The scenarios of the procedure contract, each against the real database: the rows are written through the
 * user's own actions, on real connections, in exactly the order a scenario needs (interleavings are driven step by
 * step, no timing involved), and the function is read as the engine reads it.
 */
public final class ContractScenarios {

    /** Everything the scenarios need. */
    /**
     * @param function what the report names (the function, or the provider's object)
     * @param target   a fresh connection to what is read, for each run
     */
    public record Setup(DataSource dataSource, String function, Supplier<ContractTarget> target, String keyField,
                        String clearedField, RowAction insert, RowAction update, RowAction clear, RowAction delete,
                        Supplier<?> keys, int timeoutSeconds, boolean netChanges) {
        public Setup {
            Objects.requireNonNull(dataSource, "dataSource");
            Objects.requireNonNull(function, "function");
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(keyField, "keyField");
            Objects.requireNonNull(clearedField, "clearedField");
            Objects.requireNonNull(insert, "insert");
            Objects.requireNonNull(update, "update");
            Objects.requireNonNull(clear, "clear");
            Objects.requireNonNull(delete, "delete");
            Objects.requireNonNull(keys, "keys");
        }
    }

    private interface Body {
        void run(Run run);
    }

    private record Definition(String id, String title, Body body) {
    }

    private final Setup setup;
    private final ContractClient client;
    private final Set<Object> written = new LinkedHashSet<>();

    public ContractScenarios(Setup setup) {
        this.setup = setup;
        this.client = new ContractClient(setup.target().get());
    }

    /** Runs every scenario, then deletes the rows it left behind. */
    public List<ContractReport.Scenario> run() {
        List<Definition> definitions = List.of(
                new Definition("metadata-version", "Every answer carries an integer Metadata.Sync.Version",
                        this::metadataVersion),
                new Definition("basic-order", "An insert, an update and a delete of one row come in order, with versions",
                        this::basicOrder),
                new Definition("delete", "A delete is reported", this::delete),
                new Definition("null-clear", "A column cleared to NULL is distinguishable from an untouched one",
                        this::nullClear),
                new Definition("seed", "Seed returns no rows and a version from which nothing is missed", this::seed),
                new Definition("monotonic", "The stored version never goes down", this::monotonic),
                new Definition("in-flight-interleaving", "A change captured first but committed last is not"
                        + " skipped (docs/contract.md#the-in-flight-transaction-gap)", this::inFlightInterleaving),
                new Definition("same-row-order", "Changes of one row come in commit order, not transaction-id order",
                        this::sameRowOrder),
                new Definition("early-read-delete", "A row read early and deleted before the next read ends deleted",
                        this::earlyReadDelete),
                new Definition("max-rows", "Paging with maxRows loses nothing, even inside a multi-row transaction",
                        this::maxRows));
        List<ContractReport.Scenario> results = new ArrayList<>();
        try {
            for (Definition d : definitions) {
                results.add(execute(d));
            }
        } finally {
            client.close();
            cleanUp();
        }
        return results;
    }

    private ContractReport.Scenario execute(Definition d) {
        List<String> transcript = new ArrayList<>();
        Run run = new Run(transcript);
        try {
            d.body().run(run);
            return new ContractReport.Scenario(d.id(), d.title(), ContractReport.Verdict.SAFE, List.of(), transcript);
        } catch (ContractClient.Violation v) {
            return new ContractReport.Scenario(d.id(), d.title(), ContractReport.Verdict.UNSAFE,
                    List.of(v.getMessage()), transcript);
        } catch (ContractSession.ActionFailure e) {
            return new ContractReport.Scenario(d.id(), d.title(), ContractReport.Verdict.ERROR,
                    List.of(e.getMessage()), transcript);
        } finally {
            run.closeSessions();
        }
    }

    /** The state of one scenario: its transcript, its reader, its sessions. */
    private final class Run {
        final List<String> transcript;
        final ContractReader reader;
        private final List<ContractSession> sessions = new ArrayList<>();

        Run(List<String> transcript) {
            this.transcript = transcript;
            this.reader = new ContractReader(client, transcript);
        }

        Object key() {
            Object key = setup.keys().get();
            written.add(key);
            return key;
        }

        /** A session committing each action at once. */
        ContractSession writer() {
            return open("writer", false);
        }

        /** A session holding one transaction open until it commits. */
        ContractSession transaction(String name) {
            return open(name, true);
        }

        private ContractSession open(String name, boolean transaction) {
            ContractSession s = ContractSession.open(setup.dataSource(), name, transaction, setup.timeoutSeconds(),
                    transcript);
            sessions.add(s);
            return s;
        }

        void closeSessions() {
            sessions.forEach(ContractSession::close);
        }
    }

    // --- scenarios ---------------------------------------------------------------------------------------

    private void metadataVersion(Run run) {
        // The client refuses any answer the engine would refuse, Metadata.Sync.Version missing above all.
        run.reader.seed();
        run.reader.poll(null);
        Object key = run.key();
        run.writer().run("insert", setup.insert(), key);
        run.reader.pollUntilQuiet(null);
    }

    /**
     * Seeds, applies the actions to a new key one transaction each, polls until quiet: the key's changes. A
     * function of net changes is read after each action instead, so that each one is a change of its own.
     */
    private List<Change> changesAfter(Run run, String names, RowAction... actions) {
        run.reader.seed();
        Object key = run.key();
        ContractSession writer = run.writer();
        String[] labels = names.split(", ");
        List<Change> seen = new ArrayList<>();
        for (int i = 0; i < actions.length; i++) {
            writer.run(labels[i], actions[i], key);
            if (setup.netChanges()) {
                seen.addAll(run.reader.pollUntilQuiet(null));
            }
        }
        if (!setup.netChanges()) {
            seen.addAll(run.reader.pollUntilQuiet(null));
        }
        List<Change> changes = of(seen, key);
        if (changes.size() != actions.length) {
            throw new ContractClient.Violation("expected " + actions.length + " changes of key " + key + " (" + names
                    + "), got " + changes.size() + ": " + changes);
        }
        return changes;
    }

    private void basicOrder(Run run) {
        List<Change> changes = changesAfter(run, "insert, update, delete", setup.insert(), setup.update(),
                setup.delete());
        Object key = changes.get(0).field(setup.keyField()).map(com.fasterxml.jackson.databind.JsonNode::asText).orElse("?");
        expectOperations(changes, key, Operation.INSERT, Operation.UPDATE, Operation.DELETE);
        long previous = Long.MIN_VALUE;
        for (Change c : changes) {
            if (c.version().isEmpty()) {
                throw new ContractClient.Violation("a change of key " + key + " carries no $version: " + c);
            }
            if (c.version().getAsLong() < previous) {
                throw new ContractClient.Violation("the versions of key " + key + " go down in commit order: " + changes);
            }
            previous = c.version().getAsLong();
        }
        if (setup.netChanges()) {
            // A consumer of net changes applies I and U as upserts (the row read may be newer than the page, and
            // a later read labels the same change again from its own changes only): each must carry the whole row.
            java.util.Set<String> whole = new java.util.TreeSet<>();
            changes.get(0).fields().fieldNames().forEachRemaining(whole::add);
            java.util.Set<String> updated = new java.util.TreeSet<>();
            changes.get(1).fields().fieldNames().forEachRemaining(updated::add);
            if (!updated.equals(whole)) {
                throw new ContractClient.Violation("a net change of key " + key + " must carry the whole row, so a"
                        + " consumer can apply it as an upsert: the update carries " + updated + ", the insert "
                        + whole + ": " + changes);
            }
        }
    }

    private void delete(Run run) {
        run.reader.seed();
        Object key = run.key();
        ContractSession writer = run.writer();
        writer.run("insert", setup.insert(), key);
        if (of(run.reader.pollUntilQuiet(null), key).isEmpty()) {
            throw new ContractClient.Violation("the insert of key " + key + " was never reported");
        }
        writer.run("delete", setup.delete(), key);
        List<Change> changes = of(run.reader.pollUntilQuiet(null), key);
        if (changes.isEmpty()) {
            throw new ContractClient.Violation("the delete of key " + key + " was never reported: the row is gone from"
                    + " the table, so only an outbox (or a RIGHT JOIN to change tracking) can report it");
        }
        expectOperations(changes, key, Operation.DELETE);
    }

    private void nullClear(Run run) {
        List<Change> changes = changesAfter(run, "insert, update, clear", setup.insert(), setup.update(),
                setup.clear());
        String field = setup.clearedField();
        Change.ColumnState untouched = changes.get(1).columnState(field);
        Change.ColumnState cleared = changes.get(2).columnState(field);
        if (cleared != Change.ColumnState.CLEARED) {
            throw new ContractClient.Violation("the change that set " + field + " to NULL reads as " + cleared
                    + " (" + changes.get(2) + "): a consumer cannot tell the column was cleared. Send it as null, or"
                    + " list it in $changed.");
        }
        if (untouched != Change.ColumnState.SET && untouched != Change.ColumnState.UNCHANGED) {
            throw new ContractClient.Violation("the update that did not touch " + field + " reads as " + untouched
                    + " for it (" + changes.get(1) + "): a consumer would clear a column that kept its value");
        }
    }

    private void seed(Run run) {
        ContractSession writer = run.writer();
        writer.run("insert", setup.insert(), run.key());
        ContractClient.Answer seed = run.reader.seed();
        if (!seed.rows().isEmpty()) {
            throw new ContractClient.Violation("the seed returned " + seed.rows().size() + " rows; a seed must return"
                    + " none (the engine discards them with a warning)");
        }
        Object key = run.key();
        writer.run("insert", setup.insert(), key);
        if (of(run.reader.pollUntilQuiet(null), key).isEmpty()) {
            throw new ContractClient.Violation("the insert of key " + key + ", committed after the seed, was never"
                    + " reported after the seed's version " + seed.summary().metadataVersion());
        }
    }

    private void monotonic(Run run) {
        // The reader refuses any answer that would move the stored version back.
        run.reader.seed();
        run.reader.poll(null);
        run.reader.poll(null);
        Object key = run.key();
        ContractSession writer = run.writer();
        writer.run("insert", setup.insert(), key);
        run.reader.pollUntilQuiet(null);
        writer.run("update", setup.update(), key);
        run.reader.pollUntilQuiet(null);
        run.reader.poll(null);
    }

    private void inFlightInterleaving(Run run) {
        run.reader.seed();
        ContractSession u = run.transaction("U");
        ContractSession t = run.transaction("T");
        Object keyOfT = run.key();
        Object keyOfU = run.key();

        u.takeTransactionId();                   // 1. U takes its transaction id first
        t.run("insert", setup.insert(), keyOfT); // 2. T's change is captured first; T stays open
        long xidOfT = t.transactionId();
        u.run("insert", setup.insert(), keyOfU); // 3. U writes and commits
        u.commit();
        List<Change> seen = new ArrayList<>(run.reader.pollUntilQuiet(null)); // 4. polls while T is open
        long watermarkWhileOpen = run.reader.watermark();
        t.commit();                              // 5. T commits
        seen.addAll(run.reader.pollUntilQuiet(null));

        if (of(seen, keyOfU).isEmpty()) {
            throw new ContractClient.Violation("the change of key " + keyOfU + " (committed first) was never reported");
        }
        if (of(seen, keyOfT).isEmpty()) {
            throw new ContractClient.Violation("the change of key " + keyOfT + ", captured first but committed last"
                    + " (by transaction " + xidOfT + "), was never reported: the stored version had moved to "
                    + watermarkWhileOpen + " while it was still open. Filter by the transaction horizon AND take the"
                    + " version from the writing transaction (see docs/contract.md#the-in-flight-transaction-gap).");
        }
    }

    private void sameRowOrder(Run run) {
        run.reader.seed();
        Object key = run.key();
        run.writer().run("insert", setup.insert(), key);
        run.reader.pollUntilQuiet(null);
        ContractSession older = run.transaction("older");
        ContractSession younger = run.transaction("younger");

        older.takeTransactionId();               // the older transaction id ...
        younger.run("delete", setup.delete(), key);
        younger.commit();                        // ... but the younger transaction deletes the row and commits first
        older.run("insert", setup.insert(), key); // then the older one creates it again and commits last
        older.commit();
        List<Change> changes = of(run.reader.pollUntilQuiet(null), key);

        if (setup.netChanges()) {
            // Both commits fall between two reads: one net change, which must leave the row existing.
            if (changes.isEmpty() || changes.get(changes.size() - 1).operation().isEmpty()
                    || changes.get(changes.size() - 1).operation().get() == Operation.DELETE) {
                throw new ContractClient.Violation("after a delete and an insert of key " + key + " committed between"
                        + " two reads, the row exists, but the changes reported do not end with it: " + changes);
            }
            return;
        }
        if (changes.size() != 2) {
            throw new ContractClient.Violation("expected 2 changes of key " + key + " (delete, then insert), got "
                    + changes.size() + ": " + changes);
        }
        Optional<Operation> last = changes.get(1).operation();
        if (last.isEmpty()) {
            throw new ContractClient.Violation("the changes of key " + key + " carry no $operation, so their order"
                    + " cannot be applied: " + changes);
        }
        if (last.get() == Operation.DELETE) {
            throw new ContractClient.Violation("the delete of key " + key + " comes after the insert that followed it:"
                    + " a consumer applying the changes in the order given ends without the row, which exists."
                    + " Changes are ordered by transaction id instead of commit order: " + changes);
        }
    }

    /**
     * A key deleted, then inserted again while an older transaction holds the horizon below the insert, then read:
     * a function of net changes reads the row as it is, so it may deliver the re-inserted row early, with the
     * delete's page. The key is deleted before the next read, which then holds the insert and the delete. Whatever
     * the function delivered, the changes of the key must end with a delete: a function that leaves out "inserted
     * and deleted between two reads" as nothing to tell leaves its reader holding the early row.
     */
    private void earlyReadDelete(Run run) {
        run.reader.seed();
        Object key = run.key();
        ContractSession writer = run.writer();
        writer.run("insert", setup.insert(), key);
        run.reader.pollUntilQuiet(null);
        writer.run("delete", setup.delete(), key);
        ContractSession older = run.transaction("older");
        older.takeTransactionId();                // holds the horizon below the insert that follows
        writer.run("insert", setup.insert(), key);
        List<Change> seen = new ArrayList<>(run.reader.pollUntilQuiet(null));
        older.commit();
        writer.run("delete", setup.delete(), key);
        seen.addAll(run.reader.pollUntilQuiet(null));

        List<Change> changes = of(seen, key);
        Change last = changes.isEmpty() ? null : changes.get(changes.size() - 1);
        if (last == null || last.operation().filter(op -> op == Operation.DELETE).isEmpty()) {
            throw new ContractClient.Violation("key " + key + " was deleted, inserted again while an older"
                    + " transaction was open, and deleted again, but the changes reported after its first insert end"
                    + " with " + (last == null ? "nothing" : last) + ": a consumer"
                    + " ends holding a row the table does not. Report a key whose row is absent as a delete even when"
                    + " its first change in the read is an insert: an earlier read may have delivered that insert"
                    + " early (see docs/contract.md#net-changes).");
        }
    }

    private void maxRows(Run run) {
        run.reader.seed();
        List<Object> keys = new ArrayList<>();
        ContractSession bulk = run.transaction("bulk");
        for (int i = 0; i < 3; i++) {
            Object key = run.key();
            keys.add(key);
            bulk.run("insert", setup.insert(), key);
        }
        bulk.commit();
        ContractSession writer = run.writer();
        for (int i = 0; i < 2; i++) {
            Object key = run.key();
            keys.add(key);
            writer.run("insert", setup.insert(), key);
        }
        List<Change> seen = run.reader.pollUntilQuiet(2);
        List<Object> missing = keys.stream().filter(k -> of(seen, k).isEmpty()).toList();
        if (!missing.isEmpty()) {
            throw new ContractClient.Violation("with maxRows 2, the changes of keys " + missing + " were never reported:"
                    + " a page that ends inside a transaction stores a version that skips the rest of it. End pages"
                    + " on whole versions.");
        }
    }

    // --- helpers -------------------------------------------------------------------------------------------

    /** The changes of one key, in the order reported. */
    private List<Change> of(List<Change> changes, Object key) {
        String wanted = String.valueOf(key);
        return changes.stream()
                .filter(c -> c.field(setup.keyField()).map(v -> v.asText().equals(wanted)).orElse(false))
                .collect(Collectors.toList());
    }

    private static void expectOperations(List<Change> changes, Object key, Operation... expected) {
        for (int i = 0; i < expected.length; i++) {
            Optional<Operation> op = changes.get(changes.size() - expected.length + i).operation();
            if (op.isPresent() && op.get() != expected[i]) {
                throw new ContractClient.Violation("the changes of key " + key + " report "
                        + changes.stream().map(c -> c.operation().map(Operation::code).orElse("?")).toList()
                        + " where " + java.util.Arrays.stream(expected).map(Operation::code).toList() + " happened");
            }
        }
    }

    /** Deletes the rows the scenarios left (best effort: a row already gone is fine). */
    private void cleanUp() {
        try (ContractSession s = ContractSession.open(setup.dataSource(), "cleanup", false, setup.timeoutSeconds(),
                new ArrayList<>())) {
            for (Object key : written) {
                try {
                    s.run("delete", setup.delete(), key);
                } catch (ContractSession.ActionFailure ignored) {
                    // Deleting a row that is not there may fail for some actions; nothing is left to clean.
                }
            }
        } catch (ContractSession.ActionFailure ignored) {
            // No connection for cleaning up: the rows stay, which a test database tolerates.
        }
    }
}
