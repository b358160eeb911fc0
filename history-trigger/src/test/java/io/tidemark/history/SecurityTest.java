package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The security model of the README, end to end with three ordinary roles and no superuser: an owner that installs,
 * an application that writes the table, a reader that queries history. Every grant here is one the README lists.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class SecurityTest {

    @Test
    void an_owner_installs_an_application_writes_and_a_reader_reads_with_only_the_documented_grants(TestDatabase db) {
        DataSource admin = db.dataSource();
        DataSource owner = db.createRole("sec_owner");
        DataSource app = db.createRole("sec_app");
        DataSource reader = db.createRole("sec_reader");
        // What a DBA does once: a schema for the owner, and CREATE on the database for the tidemark registry schema.
        Db.exec(admin, "CREATE SCHEMA crm AUTHORIZATION sec_owner; GRANT CREATE ON DATABASE \"" + db.name()
                + "\" TO sec_owner");

        Db.exec(owner, "CREATE TABLE crm.customers (id int PRIMARY KEY, name text NOT NULL)");
        TemporalTable customers = TemporalTable.forTable("crm.customers").build();
        customers.install(owner);
        // The owner's grants (documented): the application writes the table; the reader reads history.
        Db.exec(owner, "GRANT USAGE ON SCHEMA crm TO sec_app, sec_reader;"
                + " GRANT SELECT, INSERT, UPDATE, DELETE ON crm.customers TO sec_app;"
                + " GRANT SELECT ON crm.customers, crm.customers_history TO sec_reader;"
                + " GRANT USAGE ON SCHEMA tidemark TO sec_reader;"
                + " GRANT SELECT ON tidemark.temporal_tables TO sec_reader");

        ChangeContext.runWith(ChangeContext.changedBy("app-user-7"), () -> {
            try (var c = ContextualDataSource.wrap(app).getConnection(); var s = c.createStatement()) {
                s.execute("INSERT INTO crm.customers VALUES (1, 'Ann')");
                s.execute("UPDATE crm.customers SET name = 'Anne' WHERE id = 1");
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThatThrownBy(() -> Db.exec(app, "SELECT * FROM crm.customers_history"))
                .as("the application cannot even read history").hasMessageContaining("permission denied");
        assertThatThrownBy(() -> Db.exec(app, "UPDATE crm.customers_history SET changed_by = 'x'"))
                .hasMessageContaining("permission denied");

        assertThat(customers.queries(reader).history(1)).extracting(r -> r.value("name") + "/"
                + r.context().changedBy().orElse("-")).containsExactly("Ann/app-user-7", "Anne/app-user-7");
        assertThat(Db.count(reader, "SELECT count(*) FROM crm.customers_as_of(now())")).isEqualTo(1);
        assertThatThrownBy(() -> Db.exec(reader, "DELETE FROM crm.customers_history"))
                .hasMessageContaining("permission denied");
        assertThatThrownBy(() -> customers.queries(app).asOf(Instant.now()))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.PERMISSION_DENIED));

        // Maintenance stays with the owner; it needs no superuser either.
        assertThat(customers.verify(owner).drifts()).isEmpty();
        Db.exec(owner, "ALTER TABLE crm.customers ADD COLUMN email text");
        customers.evolve(owner);
        customers.prune(owner, Instant.now().minusSeconds(3600));
        assertThat(customers.verify(owner).drifts()).isEmpty();
        assertThat(Db.scalar(admin, "SELECT rolsuper FROM pg_roles WHERE rolname = 'sec_owner'")).isEqualTo(false);

        // A second owner without CREATE on the database, once the registry exists: the documented registry grant.
        DataSource second = db.createRole("sec_owner2");
        Db.exec(admin, "REVOKE CREATE ON DATABASE \"" + db.name() + "\" FROM sec_owner;"
                + " CREATE SCHEMA billing AUTHORIZATION sec_owner2");
        Db.exec(owner, "GRANT USAGE ON SCHEMA tidemark TO sec_owner2;"
                + " GRANT SELECT, INSERT, UPDATE, DELETE ON tidemark.temporal_tables TO sec_owner2");
        Db.exec(second, "CREATE TABLE billing.invoices (id int PRIMARY KEY, total numeric)");
        TemporalTable invoices = TemporalTable.forTable("billing.invoices").build();
        try (var c = second.getConnection(); var s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute(invoices.script(second));   // the script path, as a migration tool runs it
            c.commit();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        assertThat(invoices.verify(second).drifts()).isEmpty();
    }
}
