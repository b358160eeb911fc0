package io.tidemark.cli.internal;

import io.tidemark.testing.ContractReport;
import io.tidemark.testing.ProcedureContractVerifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code tidemark verify-contract}: {@link ProcedureContractVerifier} against a live change function. It writes
 * rows through the statements given (and deletes them at the end): run it against a test or staging database.
 */
@Command(name = "verify-contract", mixinStandardHelpOptions = true, description = {
        "Checks a PostgreSQL change function against the procedure contract; exit 0 only when SAFE.",
        "Prints the verdict per scenario. It writes rows with keys it chooses through the statements you give",
        "(each takes the key as its one parameter, ?) and deletes them at the end: use a test database."})
public final class VerifyContractCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "FUNCTION", description = "The change function, schema.name.")
    String function;

    @Option(names = "--key-field", required = true, paramLabel = "FIELD",
            description = "The JSON key that carries the row's key, such as ItemCode.")
    String keyField;

    @Option(names = "--insert", required = true, paramLabel = "SQL",
            description = "Inserts a row with key ?, with a non-NULL value in the column --clear empties.")
    String insert;

    @Option(names = "--update", required = true, paramLabel = "SQL",
            description = "Changes the row with key ?, leaving that column alone.")
    String update;

    @Option(names = "--clear", required = true, paramLabel = "SQL", description = "Sets that column to NULL for key ?.")
    String clear;

    @Option(names = "--cleared-field", required = true, paramLabel = "FIELD",
            description = "The JSON key under which the function reports the cleared column.")
    String clearedField;

    @Option(names = "--delete", required = true, paramLabel = "SQL", description = "Deletes the row with key ?.")
    String delete;

    @Option(names = "--first-key", paramLabel = "N", description = "For a numeric key: keys N, N+1, ... (no row may"
            + " have them). Default: text keys unique to the run.")
    Long firstKey;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long one statement may take; default 30s.")
    Duration timeout;

    @Option(names = "--details", description = "Print the findings and transcript of every scenario that is not SAFE.")
    boolean details;

    @Mixin ConnectionOptions connection;

    @Override
    public Integer call() {
        ProcedureContractVerifier.Builder b = ProcedureContractVerifier.forFunction(connection.connectPostgres(),
                        function)
                .keyField(keyField).insert(insert).update(update).clear(clear, clearedField).delete(delete);
        if (firstKey != null) {
            AtomicLong next = new AtomicLong(firstKey);
            b.keys(next::getAndIncrement);
        }
        if (timeout != null) {
            b.timeout(timeout);
        }
        Output.note("verifying " + function + " (a few seconds per scenario)...");
        ContractReport report = b.verify();
        Output.print(report.describe(details));
        if (!report.isSafe()) {
            throw new Finding(function + " is NOT SAFE" + (details ? "" : "; --details shows why"));
        }
        return 0;
    }
}
