-- Tidemark JDBC table destination: its two tables in the target database.
-- The position table holds, per destination and tracked object, the last page applied to the
-- target table; it is written in the same transaction as the page, so a page is applied once.
-- The stage table holds the pages of a FULL export until its last page replaces the table's
-- content. Safe to run again.
IF OBJECT_ID(N'[tidemark].[tidemark_destination_position]', N'U') IS NULL
CREATE TABLE [tidemark].[tidemark_destination_position] (
    destination_name NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    object_name      NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    from_version     BIGINT            NULL, -- NULL until the first page is applied
    to_version       BIGINT            NULL,
    page_number      INT               NULL,
    page_count       INT               NULL,
    idempotency_key  VARCHAR(40)       NULL,
    sync_type        VARCHAR(10)       NULL, -- FULL or DIFF
    applied_at       DATETIMEOFFSET(6) NULL,
    PRIMARY KEY (destination_name, object_name)
);
GO

IF OBJECT_ID(N'[tidemark].[tidemark_destination_stage]', N'U') IS NULL
CREATE TABLE [tidemark].[tidemark_destination_stage] (
    destination_name NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    object_name      NVARCHAR(200) COLLATE Latin1_General_100_BIN2 NOT NULL,
    page_number      INT           NOT NULL,
    ordinal          INT           NOT NULL,
    change_json      NVARCHAR(MAX) NOT NULL, -- the change as the procedure returned it
    PRIMARY KEY (destination_name, object_name, page_number, ordinal)
);
GO
