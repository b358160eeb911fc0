package io.tidemark.sync.internal.store;

import io.tidemark.sync.testsupport.Golden;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dead-letter table's SQL for both databases against golden files, without a server. The same SQL runs against
 * the embedded PostgreSQL in provider-postgres ({@code PostgresDeadLetterStoreTest}, {@code DeadLetterUpgradeTest})
 * and against SQL Server in provider-mssql's container tests.
 *
 * <p>To accept a deliberate change, run with {@code -Dtidemark.golden.update=true} and review the diff.
 */
class DeadLetterDialectTest {

    @Test
    void postgres_sql_matches_the_golden_file() {
        Golden.assertMatches("postgres-dead-letters.sql",
                render(StoreDialect.forProduct("PostgreSQL", "tidemark", "sync_state", "dead_letters").deadLetters()));
    }

    @Test
    void sql_server_sql_matches_the_golden_file() {
        Golden.assertMatches("sqlserver-dead-letters.sql", render(
                StoreDialect.forProduct("Microsoft SQL Server", "tidemark", "sync_state", "dead_letters").deadLetters()));
    }

    @Test
    void claims_skip_or_read_past_locked_rows_and_a_destination_claim_waits_for_concurrent_ones() {
        DeadLetterDialect pg = new PostgresStoreDialect("tidemark", "s", "letters").deadLetters();
        assertThat(pg.claimOne()).contains("FOR UPDATE SKIP LOCKED").contains("f.claimed_until <= :now");
        assertThat(pg.lockDestination()).contains("FOR UPDATE").doesNotContain("SKIP LOCKED");
        assertThat(pg.claimNext()).contains("o.claimed_by <> :claimant AND o.claimed_until > :now")
                .contains("ORDER BY f.from_version, f.page_number, f.id");
        DeadLetterDialect mssql = new SqlServerStoreDialect("tidemark", "s", "letters").deadLetters();
        assertThat(mssql.claimOne()).contains("WITH (READPAST, UPDLOCK, ROWLOCK)");
        assertThat(mssql.lockDestination()).contains("WITH (UPDLOCK, HOLDLOCK, ROWLOCK)");
        assertThat(mssql.selectPageForUpdate()).contains("WITH (UPDLOCK, HOLDLOCK)");
        assertThat(mssql.claimNext()).contains("SELECT TOP (:limit) f.id")
                .contains("o.claimed_by <> :claimant AND o.claimed_until > :now");
    }

    @Test
    void only_the_claimant_resolves_releases_or_records_a_failed_replay() {
        for (DeadLetterDialect dialect : new DeadLetterDialect[] {
                new PostgresStoreDialect("tidemark", "s", "letters").deadLetters(),
                new SqlServerStoreDialect("tidemark", "s", "letters").deadLetters()}) {
            assertThat(dialect.resolveClaimed()).endsWith("WHERE id = :id AND claimed_by = :claimant");
            assertThat(dialect.release()).endsWith("WHERE id = :id AND claimed_by = :claimant");
            assertThat(dialect.updateFailuresAndRelease()).endsWith("WHERE id = :id AND claimed_by = :claimant");
            assertThat(dialect.selectClaimedForUpdate()).contains("WHERE id = :id AND claimed_by = :claimant");
        }
    }

    @Test
    void index_names_keep_their_suffix_when_the_table_name_is_long() {
        String table = "d".repeat(63);
        assertThat(new PostgresStoreDialect("tidemark", "s", table).createScript())
                .contains("\"" + "d".repeat(63 - "_page_key".length()) + "_page_key\"");
    }

    /** Every statement of the dialect, in a fixed order, as one document. */
    static String render(DeadLetterDialect dialect) {
        DeadLetterUpgrade.Steps upgrade = dialect.upgradeSteps();
        return "-- script()\n" + dialect.script()
                + "\n-- insert()\n" + dialect.insert()
                + "\n\n-- selectPageForUpdate()\n" + dialect.selectPageForUpdate()
                + "\n\n-- updateFailures()\n" + dialect.updateFailures()
                + "\n\n-- selectByObject()\n" + dialect.selectByObject()
                + "\n\n-- selectByDestination()\n" + dialect.selectByDestination()
                + "\n\n-- selectById()\n" + dialect.selectById()
                + "\n\n-- claimOne()\n" + dialect.claimOne()
                + "\n\n-- lockDestination()\n" + dialect.lockDestination()
                + "\n\n-- claimNext()\n" + dialect.claimNext()
                + "\n\n-- resolveClaimed()\n" + dialect.resolveClaimed()
                + "\n\n-- resolveByKey()\n" + dialect.resolveByKey()
                + "\n\n-- release()\n" + dialect.release()
                + "\n\n-- selectClaimedForUpdate()\n" + dialect.selectClaimedForUpdate()
                + "\n\n-- updateFailuresAndRelease()\n" + dialect.updateFailuresAndRelease()
                + "\n\n-- delete()\n" + dialect.delete()
                + "\n\n-- purge()\n" + dialect.purge()
                + "\n\n-- upgrade: add columns\n" + upgrade.addColumns()
                + "\n\n-- upgrade: fill one row\n" + upgrade.fill()
                + "\n\n-- upgrade: finish\n" + upgrade.finish()
                + "\n";
    }
}
