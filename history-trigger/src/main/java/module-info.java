/**
 * Trigger-based history for PostgreSQL ({@code io.tidemark.history}) and its JDBI plugin
 * ({@code io.tidemark.history.jdbi}). Its {@code internal} packages are not exported.
 */
module io.tidemark.history {
    requires transitive io.tidemark.core;
    // The JDBI plugin's API is a JdbiPlugin. Not optional: the pom declares JDBI as a plain dependency (core needs it).
    requires transitive org.jdbi.v3.core;

    exports io.tidemark.history;
    exports io.tidemark.history.jdbi;
}
