package io.tidemark.kafka.connect;

import io.tidemark.kafka.connect.ConnectTestCluster.Received;
import io.tidemark.sqlserver.ChangeProcedureGenerator;
import io.tidemark.sqlserver.ChangeTrackingSetup;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connector on a real Kafka and Connect cluster over a real SQL Server 2022: a table with Change Tracking and
 * the procedure provider-mssql generates for it, called by a login that has only EXECUTE on the procedure and VIEW
 * CHANGE TRACKING on the table. Skipped where there is no Docker; written to run on every machine that has it.
 */
@SqlServerContainerTest
class SqlServerConnectorContainerTest {

    private final SqlServerDatabase database;

    SqlServerConnectorContainerTest(SqlServerDatabase database) {
        this.database = database;
    }

    @Test
    void exports_the_table_then_delivers_updates_deletes_and_inserts_from_change_tracking() {
        database.execute("CREATE TABLE dbo.Items (ItemCode NVARCHAR(20) NOT NULL PRIMARY KEY,"
                + " Description NVARCHAR(MAX) NULL, Price DECIMAL(10, 2) NULL)");
        database.execute("INSERT INTO dbo.Items VALUES (N'I1', N'Widget', 12.50), (N'I2', N'Gadget', 3.00),"
                + " (N'I3', N'Gizmo', 99.99)");
        ChangeTrackingSetup.builder().retention(Duration.ofDays(2)).table("dbo.Items").build()
                .install(database.dataSource());
        ChangeProcedureGenerator procedure = ChangeProcedureGenerator.forTable("dbo.Items")
                .keyColumns("ItemCode").columns("Description", "Price").build();
        procedure.install(database.dataSource());
        String login = "tidemark_connect_" + UUID.randomUUID().toString().substring(0, 8);
        String password = "Tm-" + UUID.randomUUID() + "-aA1!";
        database.execute("CREATE LOGIN [" + login + "] WITH PASSWORD = N'" + password + "', CHECK_POLICY = OFF,"
                + " DEFAULT_DATABASE = [" + database.name() + "]");
        try {
            database.execute("CREATE USER [" + login + "] FOR LOGIN [" + login + "]");
            database.execute("GRANT EXECUTE ON " + procedure.procedureName() + " TO [" + login + "]");
            database.execute("GRANT VIEW CHANGE TRACKING ON dbo.Items TO [" + login + "]");

            Map<String, String> objects = new HashMap<>();
            objects.put("tidemark.objects", "Items");
            objects.put("object.Items.procedure", procedure.procedureName());
            objects.put("object.Items.key", "ItemCode");
            objects.put("object.Items.initial.sync", "FULL");
            objects.put("object.Items.table", "dbo.Items");
            objects.put("connection.user", login);
            objects.put("connection.password", password);
            objects.put("listen", "false");
            objects.put("tasks.max", "1");
            objects.put("topic.prefix", "mssql.");
            objects.put("position.topic", "mssql.positions");
            objects.put("poll.interval.ms", "200");
            try (ConnectTestCluster cluster = new ConnectTestCluster(1)) {
                cluster.start("mssql-items", ConnectTestCluster.readmeConfig(database.jdbcUrl(), objects), 1);

                List<Received> exported = cluster.readUntil("mssql.Items", r -> r.size() == 3);
                assertThat(exported).extracting(Received::key).containsExactlyInAnyOrder(
                        "{\"ItemCode\":\"I1\"}", "{\"ItemCode\":\"I2\"}", "{\"ItemCode\":\"I3\"}");
                assertThat(exported).allSatisfy(r -> {
                    assertThat(r.value().get("syncType").asText()).isEqualTo("FULL");
                    assertThat(r.headers()).containsEntry("tidemark.reasonCode", "0");
                });

                database.execute("UPDATE dbo.Items SET Price = 13.00 WHERE ItemCode = N'I1'");
                database.execute("DELETE FROM dbo.Items WHERE ItemCode = N'I2'");
                database.execute("INSERT INTO dbo.Items VALUES (N'N1', N'New', 9.99)");

                // 3 changes (the README configuration sets delete.tombstones, so the delete's tombstone follows)
                List<Received> all = cluster.readUntil("mssql.Items",
                        r -> r.stream().filter(x -> x.value() != null).count() == 6);
                List<Received> diff = all.stream().filter(r -> r.value() != null).skip(3).toList();
                assertThat(diff).extracting(Received::operation).containsExactly("U", "D", "I");
                assertThat(diff).extracting(Received::key).containsExactly(
                        "{\"ItemCode\":\"I1\"}", "{\"ItemCode\":\"I2\"}", "{\"ItemCode\":\"N1\"}");
                assertThat(diff).allSatisfy(r -> assertThat(r.value().get("syncType").asText()).isEqualTo("DIFF"));
                assertThat(diff).extracting(r -> r.value().get("version").asLong()).isSorted();
                assertThat(diff.get(0).row().get("Price").decimalValue()).isEqualByComparingTo("13.00");
                assertThat(all.stream().filter(r -> r.value() == null)).singleElement()
                        .extracting(Received::key).isEqualTo("{\"ItemCode\":\"I2\"}");
            }
        } finally {
            database.execute("IF SUSER_ID(N'" + login + "') IS NOT NULL DROP LOGIN [" + login + "]");
        }
    }
}
