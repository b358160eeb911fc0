package io.tidemark.history;

/** {@link ConcurrencyContract} with row triggers. */
class RowConcurrencyTest extends ConcurrencyContract {

    RowConcurrencyTest(javax.sql.DataSource ds) {
        super(ds);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.ROW;
    }
}
