package io.tidemark.history;

/** {@link TriggerSemanticsContract} with statement triggers. */
class StatementTriggerSemanticsTest extends TriggerSemanticsContract {

    StatementTriggerSemanticsTest(javax.sql.DataSource ds) {
        super(ds);
    }

    @Override
    TriggerMode mode() {
        return TriggerMode.STATEMENT;
    }
}
