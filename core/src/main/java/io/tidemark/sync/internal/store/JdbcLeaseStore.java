package io.tidemark.sync.internal.store;

import io.tidemark.sync.CheckReport;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The lease tables next to a JDBC watermark store, in its database and schema: the only place their statements
 * run, besides the fence of the stores' own writes ({@link JdbcStoreSupport#fence}).
 */
public final class JdbcLeaseStore {

    private final JdbcStoreSupport support;

    /** Creates the lease tables if missing (and the store creates its tables): only coordinated engines have them. */
    public JdbcLeaseStore(JdbcStoreSupport support) {
        this.support = support;
        support.prepareLeaseTables();
    }

    /** The start-up check of coordination: both lease tables can be read (with the columns this version uses). */
    public List<CheckReport.Problem> check() {
        LeaseDialect sql = support.dialect().leases();
        List<CheckReport.Problem> problems = new ArrayList<>();
        problems.addAll(support.check("lease table " + sql.leaseTable(), sql.selectInFlight()));
        problems.addAll(support.check("heartbeat table " + sql.instanceTable(), sql.probeInstances()));
        return problems;
    }

    /** Runs {@code work} on one connection (a coordination round); database failures are wrapped as the stores' are. */
    public <T> T inSession(String what, Function<Session, T> work) {
        try {
            return support.jdbi().withHandle(h -> work.apply(new Session(h)));
        } catch (JdbiException e) {
            throw support.failure(what, "*", e);
        }
    }

    /**
     * Records the page {@code holder} is about to deliver, fenced in the same statement; false when the lease was
     * lost (nothing is written). Runs on the caller's (the cycle's) thread, in its own auto-commit statement.
     */
    public boolean recordInFlight(String objectName, String holder, long epoch, String page) {
        try {
            return support.jdbi().withHandle(h -> h.createUpdate(support.dialect().leases().recordInFlight())
                    .bind("name", objectName).bind("holder", holder).bind("epoch", epoch).bind("page", page)
                    .execute()) == 1;
        } catch (JdbiException e) {
            throw support.failure("record the page in flight", objectName, e);
        }
    }

    /** The statements of one round, on one connection, each in its own (auto-commit) transaction. */
    public final class Session {
        private final Handle h;

        private Session(Handle h) {
            this.h = h;
        }

        private LeaseDialect sql() {
            return support.dialect().leases();
        }

        /**
         * Records the instance, tracking the object set, as alive for {@code ttl} more, forgets expired instances;
         * returns how many instances tracking the same set are alive.
         */
        public int heartbeat(String objectSet, String instance, String destinations, Duration ttl) {
            h.createUpdate(sql().heartbeat()).bind("instance", instance).bind("object_set", objectSet)
                    .bind("destinations", destinations).bind("ms", ttl.toMillis()).execute();
            h.createUpdate(sql().forgetExpiredInstances()).execute();
            return h.createQuery(sql().liveInstances()).bind("object_set", objectSet).mapTo(Integer.class).one();
        }

        /** The destination lists (JSON arrays) the live instances of {@code objectSet} published. */
        public List<String> liveDestinations() {
            return h.createQuery(sql().liveDestinations()).mapTo(String.class).list();
        }

        /** The new epoch if the lease was free and is now {@code holder}'s. */
        public OptionalLong acquire(String objectName, String holder, Duration duration) {
            return h.createQuery(sql().acquire())
                    .bind("name", objectName).bind("holder", holder).bind("ms", duration.toMillis())
                    .mapTo(Long.class).findOne().map(OptionalLong::of).orElse(OptionalLong.empty());
        }

        /** The page in flight the object's last holder recorded, if any (read right after taking the lease). */
        public Optional<String> inFlight(String objectName) {
            return h.createQuery(sql().selectInFlight()).bind("name", objectName)
                    .mapTo(String.class).findOne(); // empty also when the column is null
        }

        /** True if the lease was still held and now lasts {@code duration} more. */
        public boolean renew(String objectName, String holder, long epoch, Duration duration) {
            return h.createUpdate(sql().renew()).bind("name", objectName).bind("holder", holder)
                    .bind("epoch", epoch).bind("ms", duration.toMillis()).execute() == 1;
        }

        /** Hands the lease back (it expires now); true if it was still held. */
        public boolean release(String objectName, String holder, long epoch) {
            return h.createUpdate(sql().release()).bind("name", objectName).bind("holder", holder)
                    .bind("epoch", epoch).execute() == 1;
        }

        /** Removes the instance's heartbeat (a clean close). */
        public void leave(String instance) {
            h.createUpdate(sql().leaveInstance()).bind("instance", instance).execute();
        }

        /** Every unexpired lease: object name to holder. */
        public Map<String, String> holders() {
            Map<String, String> holders = new LinkedHashMap<>();
            h.createQuery(sql().selectLiveLeases())
                    .map((rs, ctx) -> Map.entry(rs.getString("object_name"), rs.getString("holder")))
                    .forEach(e -> holders.put(e.getKey(), e.getValue()));
            return holders;
        }
    }
}
