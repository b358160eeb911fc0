package io.tidemark.history;

/** {@link ConcurrencyContract} with statement triggers. */
class StatementConcurrencyTest extends ConcurrencyContract {

    StatementConcurrencyTest(javax.sql.DataSource ds) {
        super(ds);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }
}
