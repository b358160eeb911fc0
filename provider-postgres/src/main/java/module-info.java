/**
 * The PostgreSQL provider: the procedure-backed provider, the generated outbox and the watermark horizon
 * ({@code io.tidemark.postgres}). Its {@code internal} packages are not exported.
 */
module io.tidemark.postgres {
    requires transitive io.tidemark.core;
    requires org.postgresql.jdbc;
    requires org.slf4j;

    exports io.tidemark.postgres;
}
