package io.tidemark.kafka.connect.internal;

import com.microsoft.sqlserver.jdbc.SQLServerDataSource;
import io.tidemark.kafka.connect.TidemarkSourceConfig;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sqlserver.SqlServerProvider;
import io.tidemark.sync.spi.ChangeProvider;
import org.postgresql.ds.PGSimpleDataSource;

/** The provider a configuration's JDBC URL names, over a data source of that driver (no pool: one call at a time). */
public final class Providers {

    private Providers() {
    }

    public static ChangeProvider create(TidemarkSourceConfig config) {
        String url = config.connectionUrl();
        String password = config.password().map(p -> p.value()).orElse(null);
        if (url.startsWith("jdbc:postgresql:")) {
            PGSimpleDataSource dataSource = new PGSimpleDataSource();
            dataSource.setURL(url);
            config.user().ifPresent(dataSource::setUser);
            dataSource.setPassword(password);
            return PostgresProvider.builder(dataSource).listen(config.listen()).channel(config.listenChannel()).build();
        }
        SQLServerDataSource dataSource = new SQLServerDataSource();
        dataSource.setURL(url);
        config.user().ifPresent(dataSource::setUser);
        dataSource.setPassword(password);
        return SqlServerProvider.create(dataSource);
    }
}
