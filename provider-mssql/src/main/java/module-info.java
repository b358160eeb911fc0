/**
 * The SQL Server provider ({@code io.tidemark.sqlserver}). Its {@code internal} package is not exported.
 */
module io.tidemark.sqlserver {
    requires transitive io.tidemark.core;
    requires com.microsoft.sqlserver.jdbc;

    exports io.tidemark.sqlserver;
}
