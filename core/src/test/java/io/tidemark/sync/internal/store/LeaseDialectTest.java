package io.tidemark.sync.internal.store;

import io.tidemark.sync.testsupport.Golden;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease SQL of both databases, checked without a server against golden files. The PostgreSQL statements run
 * against a real database in provider-postgres ({@code LeaseFencingTest}, {@code CoordinatedEnginesTest}); the SQL
 * Server ones in provider-mssql's container test ({@code SqlServerLeaseContainerTest}), skipped without Docker.
 *
 * <p>To accept a deliberate change, run with {@code -Dtidemark.golden.update=true} and review the diff.
 */
class LeaseDialectTest {

    @Test
    void postgres_lease_sql_matches_the_golden_file() {
        StoreDialect dialect = StoreDialect.forProduct("PostgreSQL", "tidemark", "sync_state", "dead_letters");
        Golden.assertMatches("postgres-leases.sql", render(dialect.leases()));
    }

    @Test
    void sql_server_lease_sql_matches_the_golden_file() {
        StoreDialect dialect = StoreDialect.forProduct("Microsoft SQL Server", "tidemark", "sync_state",
                "dead_letters");
        Golden.assertMatches("sqlserver-leases.sql", render(dialect.leases()));
    }

    @Test
    void lease_tables_are_named_after_the_state_table_in_its_schema() {
        assertThat(StoreDialect.forProduct("PostgreSQL", "ops", "state", "letters").leases().leaseTable())
                .isEqualTo("\"ops\".\"state_leases\"");
        assertThat(StoreDialect.forProduct("Microsoft SQL Server", "ops]x", "state", "letters").leases().leaseTable())
                .isEqualTo("[ops]]x].[state_leases]");
    }

    @Test
    void every_expiry_is_decided_on_the_database_clock() {
        for (String product : new String[] {"PostgreSQL", "Microsoft SQL Server"}) {
            LeaseDialect leases = StoreDialect.forProduct(product, "tidemark", "sync_state", "dead_letters").leases();
            String clock = product.equals("PostgreSQL") ? "clock_timestamp()" : "SYSUTCDATETIME()";
            for (String sql : new String[] {leases.acquire(), leases.renew(), leases.release(), leases.fence(),
                    leases.liveInstances(), leases.heartbeat(), leases.selectLiveLeases(),
                    leases.recordInFlight()}) {
                assertThat(sql).contains(clock).doesNotContain(":now");
            }
            // The fence and a renewal match only the holder at its epoch, and only before expiry.
            assertThat(leases.fence()).contains("holder = :holder AND epoch = :epoch")
                    .contains("expires_at > " + clock).contains("SELECT count(*)").doesNotContain("UPDATE");
            assertThat(leases.renew()).contains("holder = :holder AND epoch = :epoch");
            // The page in flight is recorded only by the holder at its epoch (the write is its own fence).
            assertThat(leases.recordInFlight()).contains("holder = :holder AND epoch = :epoch")
                    .contains("expires_at > " + clock);
            // The fair share is counted among the instances tracking the same objects only.
            assertThat(leases.liveInstances()).contains("object_set = :object_set");
            assertThat(leases.heartbeat()).contains(":object_set");
            // But the destinations holding a watermark back are those of every live instance: leases are per
            // object, and an instance tracking other objects besides still takes this one's.
            assertThat(leases.liveDestinations()).doesNotContain("object_set").contains("expires_at > " + clock);
            // Taking a lease raises its epoch, and only where the old one expired.
            assertThat(leases.acquire()).contains("epoch = l.epoch + 1").contains("l.expires_at <= " + clock);
        }
    }

    static String render(LeaseDialect dialect) {
        return "-- script()\n" + dialect.script()
                + "\n-- acquire()\n" + dialect.acquire()
                + "\n\n-- renew()\n" + dialect.renew()
                + "\n\n-- release()\n" + dialect.release()
                + "\n\n-- fence()\n" + dialect.fence()
                + "\n\n-- heartbeat()\n" + dialect.heartbeat()
                + "\n\n-- liveInstances()\n" + dialect.liveInstances()
                + "\n\n-- forgetExpiredInstances()\n" + dialect.forgetExpiredInstances()
                + "\n\n-- leaveInstance()\n" + dialect.leaveInstance()
                + "\n\n-- selectLiveLeases()\n" + dialect.selectLiveLeases()
                + "\n\n-- recordInFlight()\n" + dialect.recordInFlight()
                + "\n\n-- selectInFlight()\n" + dialect.selectInFlight()
                + "\n\n-- probeInstances()\n" + dialect.probeInstances()
                + "\n";
    }
}
