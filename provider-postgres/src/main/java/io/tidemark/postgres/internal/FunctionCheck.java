package io.tidemark.postgres.internal;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.sql.PgName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The PostgreSQL provider's start-up check: the database can be reached, and each object's function exists,
 * is visible the way the provider calls it, takes one {@code json} argument, returns one {@code json},
 * {@code jsonb} or {@code text} value, and may be executed by the role. Reads {@code pg_proc} only.
 *
 * <p>Only a {@code json} argument is accepted: the provider calls {@code SELECT f(?::json)}, and PostgreSQL has
 * no implicit cast from {@code json} to {@code jsonb} or {@code text}, so such a function would not be found.
 */
public final class FunctionCheck {

    /**
     * Every function of the name where the call would look: in the given schema, or (unqualified) in the
     * role's search_path. {@code oidvectortypes} gives the argument types as {@code format_type} spells them.
     */
    static final String CANDIDATES = """
            SELECT pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(p.proname)
                       || '(' || pg_catalog.oidvectortypes(p.proargtypes) || ')' AS signature,
                   p.prokind,
                   p.proretset,
                   p.pronargs,
                   p.pronargdefaults,
                   pg_catalog.oidvectortypes(p.proargtypes) AS arguments,
                   pg_catalog.format_type(p.prorettype, NULL) AS result,
                   pg_catalog.has_function_privilege(p.oid, 'EXECUTE') AS executable
              FROM pg_catalog.pg_proc AS p
              JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
             WHERE p.proname = ?
               AND (n.nspname = CAST(? AS text)
                    OR (CAST(? AS text) IS NULL AND n.nspname = ANY (pg_catalog.current_schemas(true))))
             ORDER BY 1""";

    private static final Set<String> RESULTS = Set.of("json", "jsonb", "text", "character varying");

    private final DataSource dataSource;
    private final int timeoutSeconds;

    public FunctionCheck(DataSource dataSource, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.timeoutSeconds = timeoutSeconds;
    }

    public List<CheckReport.Problem> run(String component, Collection<TrackedObject> objects) {
        List<CheckReport.Problem> problems = new ArrayList<>();
        try (Connection c = dataSource.getConnection()) {
            for (TrackedObject object : objects) {
                try {
                    check(c, object).ifPresent(problems::add);
                } catch (TidemarkException e) {
                    problems.add(new CheckReport.Problem(object.name(), e.code(), e.getMessage()));
                } catch (SQLException e) {
                    problems.add(new CheckReport.Problem(object.name(), ErrorCode.PROCEDURE_FAILED,
                            "the function " + object.procedure() + " could not be looked up: " + e.getMessage()));
                }
            }
        } catch (SQLException e) {
            problems.add(new CheckReport.Problem(component, ErrorCode.CONNECTION_FAILED,
                    "could not connect to the PostgreSQL database of the change functions: "
                            + withoutFullStop(e.getMessage()) + ". Check the data source's URL, the credentials and the network."));
        }
        return problems;
    }

    private Optional<CheckReport.Problem> check(Connection c, TrackedObject object) throws SQLException {
        PgName function = PgName.parse(object.procedure(), "function");
        List<Candidate> candidates = candidates(c, function);
        String name = function.toString();
        if (candidates.isEmpty()) {
            return problem(object, ErrorCode.PROCEDURE_NOT_FOUND, "function " + name + " does not exist"
                    + (function.schema().isPresent() ? "" : " in the role's search_path")
                    + ", or the role cannot see it. Create it (see docs/contract.md), or track the right name.");
        }
        List<String> found = new ArrayList<>();
        for (Candidate candidate : candidates) {
            if (candidate.callable()) {
                if (!candidate.returnsOneJson()) {
                    return problem(object, ErrorCode.PROCEDURE_SIGNATURE, candidate.signature + " returns "
                            + (candidate.set ? "SETOF " : "") + candidate.result + "; a change function returns one"
                            + " json, jsonb or text value");
                }
                if (!candidate.executable) {
                    return problem(object, ErrorCode.PERMISSION_DENIED, "the role may not execute "
                            + candidate.signature + ": GRANT EXECUTE ON FUNCTION " + candidate.signature
                            + " TO <the role>");
                }
                return Optional.empty();
            }
            found.add(candidate.describe());
        }
        return problem(object, ErrorCode.PROCEDURE_SIGNATURE, "no function " + name + " takes one json argument"
                + " (found " + String.join(", ", found) + "). Tidemark calls SELECT " + name + "(?::json);"
                + " declare the argument as json (PostgreSQL does not cast json to jsonb or text implicitly).");
    }

    private List<Candidate> candidates(Connection c, PgName function) throws SQLException {
        List<Candidate> candidates = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(CANDIDATES)) {
            ps.setQueryTimeout(timeoutSeconds);
            String schema = function.schema().orElse(null);
            ps.setString(1, function.name());
            ps.setString(2, schema);
            ps.setString(3, schema);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    candidates.add(new Candidate(rs.getString("signature"), rs.getString("prokind"),
                            rs.getBoolean("proretset"), rs.getInt("pronargs"), rs.getInt("pronargdefaults"),
                            rs.getString("arguments"), rs.getString("result"), rs.getBoolean("executable")));
                }
            }
        }
        return candidates;
    }

    private static String withoutFullStop(String message) {
        return message != null && message.endsWith(".") ? message.substring(0, message.length() - 1) : message;
    }

    private static Optional<CheckReport.Problem> problem(TrackedObject object, ErrorCode code,
                                                                   String message) {
        return Optional.of(new CheckReport.Problem(object.name(), code, message));
    }

    /** One row of {@link #CANDIDATES}. */
    private static final class Candidate {
        final String signature;
        final String kind;
        final boolean set;
        final int arguments;
        final int defaults;
        final String argumentTypes;
        final String result;
        final boolean executable;

        Candidate(String signature, String kind, boolean set, int arguments, int defaults, String argumentTypes,
                  String result, boolean executable) {
            this.signature = signature;
            this.kind = kind;
            this.set = set;
            this.arguments = arguments;
            this.defaults = defaults;
            this.argumentTypes = argumentTypes;
            this.result = result;
            this.executable = executable;
        }

        /** A function (not a procedure) that {@code f(json)} resolves to: first argument json, the rest defaulted. */
        boolean callable() {
            return "f".equals(kind) && arguments >= 1 && arguments - defaults <= 1
                    && (argumentTypes.equals("json") || argumentTypes.startsWith("json,"));
        }

        boolean returnsOneJson() {
            return !set && RESULTS.contains(result);
        }

        String describe() {
            return "p".equals(kind) ? signature + " (a PROCEDURE, which cannot return a value)" : signature;
        }
    }
}
