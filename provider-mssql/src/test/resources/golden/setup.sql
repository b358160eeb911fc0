-- ====================================================================================================
-- Tidemark Change Tracking setup for the current database and tables [dbo].[Items], [sales data].[Order Lines]
--
-- Review it, then run it in the database to track, as a user with ALTER permission on the database
-- and the tables. Running it again is safe: what is set up is left alone, except that a retention
-- shorter than 7 DAYS is raised.
-- ====================================================================================================

-- 1. Change Tracking on the database. Change information is kept for 7 DAYS: a
--    Tidemark engine stopped for longer than that loses its place, and its next cycle is a full
--    re-sync (ReasonCode 1). AUTO_CLEANUP removes older change information, so the internal
--    tables do not grow without bound.
IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_databases WHERE database_id = DB_ID())
    ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON (CHANGE_RETENTION = 7 DAYS, AUTO_CLEANUP = ON);
ELSE IF EXISTS (
    SELECT 1 FROM sys.change_tracking_databases
    WHERE database_id = DB_ID()
      -- retention_period_units: 1 = MINUTES, 2 = HOURS, 3 = DAYS
      AND CAST(retention_period AS BIGINT) * CASE retention_period_units WHEN 1 THEN 1 WHEN 2 THEN 60 ELSE 1440 END < 10080)
    ALTER DATABASE CURRENT SET CHANGE_TRACKING (CHANGE_RETENTION = 7 DAYS);
GO

-- 2. Snapshot isolation, so that a change procedure reads the version and the rows in one snapshot.
--    Without it every call fails with "snapshot isolation is not allowed in this database".
--    Readers under other isolation levels are not affected. Turning it on waits until the
--    transactions open at that moment have finished.
--    snapshot_isolation_state: 0 = OFF, 1 = ON, 2 = going OFF, 3 = going ON
IF (SELECT snapshot_isolation_state FROM sys.databases WHERE database_id = DB_ID()) NOT IN (1, 3)
    ALTER DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON;
GO

-- 3. Change Tracking on [dbo].[Items], recording which columns each update changed
--    (TRACK_COLUMNS_UPDATED), which the "$changed" array of a change procedure reads.
IF OBJECT_ID(N'[dbo].[Items]', N'U') IS NULL
    THROW 51010, N'Tidemark setup: table [dbo].[Items] does not exist.', 1;
IF OBJECTPROPERTY(OBJECT_ID(N'[dbo].[Items]'), 'TableHasPrimaryKey') = 0
    THROW 51011, N'Tidemark setup: Change Tracking needs a primary key on [dbo].[Items]; add one first.', 1;
IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID(N'[dbo].[Items]'))
    ALTER TABLE [dbo].[Items] ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON);
ELSE IF EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID(N'[dbo].[Items]') AND is_track_columns_updated_on = 0)
    PRINT N'Tidemark setup: Change Tracking on [dbo].[Items] does not record which columns updates change, so column-level change procedures send whole rows. To record them, run ALTER TABLE [dbo].[Items] DISABLE CHANGE_TRACKING and this script again; that restarts the table''s change history, and consumers get a full re-sync.';
GO

-- 4. Change Tracking on [sales data].[Order Lines], without recording which columns updates change
--    (a change procedure then reports every column of an update as changed).
IF OBJECT_ID(N'[sales data].[Order Lines]', N'U') IS NULL
    THROW 51010, N'Tidemark setup: table [sales data].[Order Lines] does not exist.', 1;
IF OBJECTPROPERTY(OBJECT_ID(N'[sales data].[Order Lines]'), 'TableHasPrimaryKey') = 0
    THROW 51011, N'Tidemark setup: Change Tracking needs a primary key on [sales data].[Order Lines]; add one first.', 1;
IF NOT EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = OBJECT_ID(N'[sales data].[Order Lines]'))
    ALTER TABLE [sales data].[Order Lines] ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = OFF);
GO

