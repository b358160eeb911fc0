package io.tidemark.benchmarks.capture;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One row of {@code pg_stat_statements} (top-level statements, utility ones such as BEGIN and COMMIT included): how
 * often the server ran a statement over a window and how long its execution took. For {@link PollerCostBenchmark}'s
 * breakdown of the engine's cost per delivered commit.
 */
record StatementStat(String query, long calls, double totalMillis, long plans, double planMillis) {

    static List<StatementStat> read(DataSource admin) throws SQLException {
        List<StatementStat> stats = new ArrayList<>();
        try (Connection c = admin.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT query, calls, total_exec_time, plans, total_plan_time FROM pg_stat_statements"
                     + " ORDER BY total_exec_time DESC")) {
            while (rs.next()) {
                stats.add(new StatementStat(rs.getString(1).replaceAll("--[^\\n]*", " ").replaceAll("\\s+", " ")
                        .trim(), rs.getLong(2), rs.getDouble(3), rs.getLong(4), rs.getDouble(5)));
            }
        }
        return stats;
    }

    /** The statements of the window, per commit written: calls and execution time; the engine's CPU for scale. */
    static void print(List<StatementStat> stats, long commits, double enginePercentOfCore, int rate) {
        System.out.printf(Locale.ROOT, "%nStatements over the window with writes (%d commits; the engine's backends"
                + " used %.0f µs of CPU per commit):%n%n", commits, enginePercentOfCore / 100 * 1e6 / rate);
        System.out.println("| statement | calls | calls per commit | execution, µs per commit | µs per call"
                + " | plans | planning, µs per plan |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        for (StatementStat s : stats) {
            String query = s.query().length() > 90 ? s.query().substring(0, 90) + "…" : s.query();
            System.out.printf(Locale.ROOT, "| `%s` | %d | %.2f | %.1f | %.1f | %d | %s |%n",
                    query.replace("|", "\\|"), s.calls(), (double) s.calls() / commits,
                    s.totalMillis() * 1000 / commits, s.totalMillis() * 1000 / s.calls(), s.plans(),
                    s.plans() == 0 ? "—" : String.format(Locale.ROOT, "%.1f", s.planMillis() * 1000 / s.plans()));
        }
    }
}
