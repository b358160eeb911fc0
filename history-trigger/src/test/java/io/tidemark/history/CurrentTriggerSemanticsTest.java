package io.tidemark.history;

/** {@link TriggerSemanticsContract} with the current version kept in the table (row triggers). */
class CurrentTriggerSemanticsTest extends TriggerSemanticsContract {

    CurrentTriggerSemanticsTest(javax.sql.DataSource ds) {
        super(ds);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }

    @Override
    HistoryStorage storage() {
        return HistoryStorage.CURRENT_IN_TABLE;
    }
}
