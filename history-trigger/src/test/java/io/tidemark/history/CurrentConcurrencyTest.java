package io.tidemark.history;

/** {@link ConcurrencyContract} with the current version kept in the table (row triggers). */
class CurrentConcurrencyTest extends ConcurrencyContract {

    CurrentConcurrencyTest(javax.sql.DataSource ds) {
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
