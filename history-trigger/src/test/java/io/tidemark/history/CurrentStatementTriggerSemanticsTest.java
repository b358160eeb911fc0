package io.tidemark.history;

/** {@link TriggerSemanticsContract} with the current version kept in the table (DELETE archived per statement). */
class CurrentStatementTriggerSemanticsTest extends TriggerSemanticsContract {

    CurrentStatementTriggerSemanticsTest(javax.sql.DataSource ds) {
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
