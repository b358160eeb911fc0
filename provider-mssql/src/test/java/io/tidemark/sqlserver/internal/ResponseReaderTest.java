package io.tidemark.sqlserver.internal;

import io.tidemark.sqlserver.internal.CallResults.ResultColumn;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the results of a call are judged: the FOR JSON result set is the document, and anything else is reported
 * for what it is, above all a stray debug SELECT before the document. Results are fed through the
 * {@link CallResults} seam, shaped as mssql-jdbc describes them.
 */
class ResponseReaderTest {

    private static final String DOC = "{\"Metadata\":{\"Sync\":{\"Version\":5}},\"Data\":[{\"$version\":5,\"Id\":1}]}";
    private final ResponseReader reader = new ResponseReader("Items", "[dbo].[get_item_changes]");

    @Test
    void reads_the_for_json_result_set_across_its_rows() throws Exception {
        Fake results = new Fake().forJson(Chunks.cut(DOC, 10, 20, 30).toArray(String[]::new));
        try (ResponsePayload payload = reader.read(results)) {
            assertThat(payload.size()).isEqualTo(DOC.length());
            assertThat(payload.head(1000)).isEqualTo(DOC);
        }
        assertThat(results.nextCalls).as("read to the end, so late errors surface").isEqualTo(2);
    }

    @Test
    void accepts_a_document_built_in_a_variable_and_selected_as_text() throws Exception {
        Fake results = new Fake().resultSet(List.of(new ResultColumn("", "nvarchar")), DOC);
        try (ResponsePayload payload = reader.read(results)) {
            assertThat(payload.head(1000)).isEqualTo(DOC);
        }
    }

    @Test
    void a_stray_debug_select_before_the_document_is_reported_as_such() {
        Fake results = new Fake()
                .resultSet(List.of(new ResultColumn("fromVersion", "bigint"), new ResultColumn("note", "varchar")),
                        "ignored")
                .forJson(DOC);
        assertThatThrownBy(() -> reader.read(results))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_RESPONSE))
                .hasMessageContaining("[Items] procedure [dbo].[get_item_changes] broke the procedure contract")
                .hasMessageContaining("it returned a result set before its JSON document (result set #2): #1 with"
                        + " columns fromVersion bigint, note varchar")
                .hasMessageContaining("usually a debug SELECT left in the procedure")
                .hasMessageContaining("Nothing was delivered and the watermark did not move");
    }

    @Test
    void a_stray_select_of_one_text_column_before_the_document_is_reported_too() {
        Fake results = new Fake().resultSet(List.of(new ResultColumn("debug", "nvarchar")), "{\"json\":1}").forJson(DOC);
        assertThatThrownBy(() -> reader.read(results))
                .hasMessageContaining("a result set before its JSON document (result set #2): #1 with column debug"
                        + " nvarchar");
    }

    @Test
    void several_stray_result_sets_are_all_listed() {
        Fake results = new Fake()
                .resultSet(List.of(new ResultColumn("a", "int")))
                .resultSet(List.of(new ResultColumn("b", "int"), new ResultColumn("c", "int")))
                .forJson(DOC);
        assertThatThrownBy(() -> reader.read(results))
                .hasMessageContaining("it returned 2 result sets before its JSON document (result set #3): #1 with"
                        + " column a int; #2 with columns b int, c int");
    }

    @Test
    void a_result_set_after_the_document_is_refused() {
        Fake results = new Fake().forJson(DOC).resultSet(List.of(new ResultColumn("rows", "int")), "1");
        assertThatThrownBy(() -> reader.read(results))
                .hasMessageContaining("it returned another result set, #2 with column rows int, after its JSON"
                        + " document (#1 with column " + ResponseReader.FOR_JSON_COLUMN + " ntext)")
                .hasMessageContaining("exactly one result set");
    }

    @Test
    void no_result_set_at_all_is_an_empty_response() {
        assertThatThrownBy(() -> reader.read(new Fake()))
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.EMPTY_RESPONSE))
                .hasMessageContaining("returned no result set; it must end with SELECT ... FOR JSON PATH,"
                        + " WITHOUT_ARRAY_WRAPPER");
    }

    @Test
    void result_sets_that_are_not_json_are_described() {
        Fake results = new Fake().resultSet(List.of(new ResultColumn("Id", "int"), new ResultColumn("Name", "nvarchar")),
                "x");
        assertThatThrownBy(() -> reader.read(results))
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_RESPONSE))
                .hasMessageContaining("none of its result sets is a JSON document: #1 with columns Id int, Name"
                        + " nvarchar");
    }

    @Test
    void a_wide_result_set_is_described_briefly() {
        List<ResultColumn> columns = new ArrayList<>();
        for (int i = 1; i <= 12; i++) {
            columns.add(new ResultColumn("c" + i, "int"));
        }
        assertThatThrownBy(() -> reader.read(new Fake().resultSet(columns)))
                .hasMessageContaining("c8 int, ... (12 in all)")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("c9 int"));
    }

    @Test
    void an_error_raised_after_the_document_fails_the_call() {
        SQLException commitFailed = ServerErrors.server(3998, 1, 16, "Uncommittable transaction is detected at the"
                + " end of the batch. The transaction is rolled back.");
        Fake results = new Fake().forJson(DOC).failOnNext(commitFailed);
        assertThatThrownBy(() -> reader.read(results)).isSameAs(commitFailed);
    }

    @Test
    void only_null_rows_give_a_blank_document_for_the_engine_to_refuse() throws Exception {
        try (ResponsePayload payload = reader.read(new Fake().forJson((String) null))) {
            assertThat(payload.isBlank()).isTrue();
        }
    }

    /** Result sets as a driver would describe them; update counts are already skipped by the real one. */
    private static final class Fake implements CallResults {
        private final List<List<ResultColumn>> columns = new ArrayList<>();
        private final List<List<String>> rows = new ArrayList<>();
        private SQLException failOnNext;
        private int index = -1;
        int nextCalls;

        Fake forJson(String... chunks) {
            return resultSet(List.of(new ResultColumn(ResponseReader.FOR_JSON_COLUMN, "ntext")), chunks);
        }

        Fake resultSet(List<ResultColumn> cols, String... chunks) {
            columns.add(cols);
            rows.add(Arrays.asList(chunks));
            return this;
        }

        Fake failOnNext(SQLException e) {
            this.failOnNext = e;
            return this;
        }

        @Override
        public boolean nextResultSet() throws SQLException {
            nextCalls++;
            index++;
            if (index >= columns.size()) {
                if (failOnNext != null) {
                    throw failOnNext;
                }
                return false;
            }
            return true;
        }

        @Override
        public List<ResultColumn> columns() {
            return columns.get(index);
        }

        @Override
        public ChunkSource chunks() {
            return Chunks.of(rows.get(index));
        }
    }
}
