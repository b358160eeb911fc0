package io.tidemark.cli.internal;

import io.tidemark.history.InstallProgress;

/** "seeding public.items: 200000 of 1000000 rows (20%)" on stderr, once per batch the install reports. */
final class SeedProgress implements InstallProgress {

    private final String table;

    SeedProgress(String table) {
        this.table = table;
    }

    @Override
    public void seeded(long rowsDone, long rowsTotal) {
        long percent = rowsTotal == 0 ? 100 : rowsDone * 100 / rowsTotal;
        Output.progress("seeding " + table + ": " + rowsDone + " of " + rowsTotal + " rows (" + percent + "%)",
                rowsDone == rowsTotal);
    }
}
