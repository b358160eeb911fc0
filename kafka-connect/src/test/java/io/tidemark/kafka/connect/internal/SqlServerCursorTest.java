package io.tidemark.kafka.connect.internal;

import io.tidemark.kafka.connect.TidemarkSourceConfig;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeProvider;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The connector's SQL Server settings without a server: {@code object.<name>.table} reaches the SQL Server
 * provider's Change Tracking window check, which the cursor runs after each call, as the engine does after each
 * cycle. Nothing listens on the URL's port, so the call and the check both fail to connect.
 */
class SqlServerCursorTest {

    private static final String UNREACHABLE = "jdbc:sqlserver://127.0.0.1:1;databaseName=shop;encrypt=false;"
            + "loginTimeout=2";

    private static TidemarkSourceConfig config(String table) {
        Map<String, String> props = new HashMap<>();
        props.put("connection.url", UNREACHABLE);
        props.put("tidemark.objects", "Items");
        props.put("object.Items.procedure", "dbo.ItemsChanges");
        props.put("object.Items.key", "ItemCode");
        if (table != null) {
            props.put("object.Items.table", table);
        }
        return new TidemarkSourceConfig(props);
    }

    @Test
    void the_table_setting_becomes_the_tracked_objects_table() {
        assertThat(config("dbo.Items").objectsByName().get("Items").object().table()).contains("dbo.Items");
        assertThat(config(null).objectsByName().get("Items").object().table()).isEmpty();
    }

    @Test
    void with_a_table_the_change_tracking_window_is_checked_after_a_call_even_a_failed_one() {
        TidemarkSourceConfig config = config("dbo.Items");
        TrackedObject object = config.objectsByName().get("Items").object();
        try (ChangeProvider provider = Providers.create(config);
             ObjectCursor cursor = new ObjectCursor(object, provider, CallContext.none(), 10, OptionalLong.of(5))) {
            assertThatThrownBy(cursor::next).isInstanceOfSatisfying(TidemarkException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED));

            assertThat(cursor.diagnostics()).singleElement().satisfies(d -> {
                assertThat(d.severity()).isEqualTo(Diagnostic.Severity.WARNING);
                assertThat(d.code()).isEqualTo("DIAGNOSTICS_FAILED");
                assertThat(d.message()).contains("Change Tracking window of [dbo].[Items]");
            });
        }
    }

    @Test
    void without_a_table_there_is_nothing_to_check() {
        TidemarkSourceConfig config = config(null);
        TrackedObject object = config.objectsByName().get("Items").object();
        try (ChangeProvider provider = Providers.create(config);
             ObjectCursor cursor = new ObjectCursor(object, provider, CallContext.none(), 10, OptionalLong.of(5))) {
            assertThatThrownBy(cursor::next).isInstanceOf(TidemarkException.class);

            assertThat(cursor.diagnostics()).isEmpty();
        }
    }
}
