package io.tidemark.history;

/** {@link ConcurrencyContract} with the current version kept in the table (DELETE archived per statement). */
class CurrentStatementConcurrencyTest extends ConcurrencyContract {

    CurrentStatementConcurrencyTest(javax.sql.DataSource ds) {
        super(ds);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }

    @Override
    HistoryStorage storage() {
        return HistoryStorage.CURRENT_IN_TABLE;
    }
}
