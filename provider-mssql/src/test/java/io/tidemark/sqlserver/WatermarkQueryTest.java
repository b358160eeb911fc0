package io.tidemark.sqlserver;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WatermarkQueryTest {

    @Test
    void change_tracking_reads_the_current_version() {
        assertThat(WatermarkQuery.changeTracking().sql()).isEqualTo("SELECT CHANGE_TRACKING_CURRENT_VERSION()");
        assertThat(WatermarkQuery.changeTracking().isChangeTracking()).isTrue();
    }

    @Test
    void rowversion_stops_below_the_oldest_open_transaction() {
        assertThat(WatermarkQuery.rowversion().sql()).isEqualTo("SELECT CAST(MIN_ACTIVE_ROWVERSION() AS BIGINT) - 1");
        assertThat(WatermarkQuery.rowversion().isChangeTracking()).isFalse();
    }

    @Test
    void sequence_and_identity_names_are_checked_and_quoted() {
        assertThat(WatermarkQuery.sequence("dbo.item_versions").sql())
                .isEqualTo("SELECT CAST(s.current_value AS BIGINT) FROM sys.sequences AS s WHERE s.object_id ="
                        + " OBJECT_ID(N'[dbo].[item_versions]', N'SO')");
        assertThat(WatermarkQuery.identity("[ops].[it's outbox]").sql())
                .isEqualTo("SELECT CAST(IDENT_CURRENT(N'[ops].[it''s outbox]') AS BIGINT)");
        assertThatThrownBy(() -> WatermarkQuery.sequence("dbo.seq; DROP TABLE x"))
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER));
    }

    @Test
    void a_custom_query_is_taken_as_given_but_not_blank() {
        assertThat(WatermarkQuery.sql("  SELECT MAX(id) FROM dbo.outbox  ").sql()).isEqualTo("SELECT MAX(id) FROM dbo.outbox");
        assertThatThrownBy(() -> WatermarkQuery.sql(" ")).hasMessage("A watermark query must not be blank");
        assertThatThrownBy(() -> WatermarkQuery.sql(null)).hasMessage("A watermark query must not be blank");
    }

    @Test
    void equal_sql_is_equal() {
        assertThat(WatermarkQuery.sql("SELECT CHANGE_TRACKING_CURRENT_VERSION()"))
                .isEqualTo(WatermarkQuery.changeTracking())
                .hasSameHashCodeAs(WatermarkQuery.changeTracking());
        assertThat(WatermarkQuery.changeTracking()).hasToString("Change Tracking (SELECT CHANGE_TRACKING_CURRENT_VERSION())");
    }
}
