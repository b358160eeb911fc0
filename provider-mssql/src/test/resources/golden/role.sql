-- ====================================================================================================
-- Tidemark least-privilege role [tidemark_reader]
--
-- What Tidemark's login needs and nothing more: to run the change procedures, and to read the
-- Change Tracking data of the tables they read. The procedures' own SELECTs reach the tables
-- through ownership chaining (procedure and table have the same owner), so the role gets no
-- SELECT on the tables. Run it as a user allowed to create roles and grant these permissions.
-- ====================================================================================================

IF DATABASE_PRINCIPAL_ID(N'tidemark_reader') IS NULL
    CREATE ROLE [tidemark_reader];
GO

-- Run the change procedures.
GRANT EXECUTE ON OBJECT::[dbo].[Items_changes] TO [tidemark_reader];
GRANT EXECUTE ON OBJECT::[sales].[get_order_changes] TO [tidemark_reader];

-- Read the Change Tracking data of the tables: CHANGETABLE and CHANGE_TRACKING_MIN_VALID_VERSION
-- check VIEW CHANGE TRACKING themselves, inside a procedure too.
GRANT VIEW CHANGE TRACKING ON OBJECT::[dbo].[Items] TO [tidemark_reader];
GRANT VIEW CHANGE TRACKING ON OBJECT::[sales].[Orders] TO [tidemark_reader];

-- Tidemark's watermark and dead-letter tables, created beforehand from JdbcWatermarkStore.script().
GRANT SELECT, INSERT, UPDATE, DELETE ON SCHEMA::[tidemark] TO [tidemark_reader];
GO

-- Member: the database user Tidemark connects as (it must exist).
IF ISNULL(IS_ROLEMEMBER(N'tidemark_reader', N'tidemark_app'), 0) = 0
    ALTER ROLE [tidemark_reader] ADD MEMBER [tidemark_app];
GO

