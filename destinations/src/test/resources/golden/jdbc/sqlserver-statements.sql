-- record the position, returning the one it replaces
-- Records the page as the position (creating the row on first use) and returns the position it
-- replaces (OUTPUT deleted.*, NULLs for a new row); HOLDLOCK keeps the row locked until the page
-- commits, so a concurrent delivery of the same page waits here and then sees this one's page.
MERGE [tidemark].[tidemark_destination_position] WITH (HOLDLOCK) AS p
USING (SELECT CAST(? AS NVARCHAR(200)) AS destination_name, -- compared in the column's collation
              CAST(? AS NVARCHAR(200)) AS object_name,
              CAST(? AS BIGINT) AS from_version,
              CAST(? AS BIGINT) AS to_version,
              CAST(? AS INT) AS page_number,
              CAST(? AS INT) AS page_count,
              CAST(? AS VARCHAR(40)) AS idempotency_key,
              CAST(? AS VARCHAR(10)) AS sync_type) AS s
   ON p.destination_name = s.destination_name
  AND p.object_name = s.object_name
 WHEN MATCHED THEN UPDATE
      SET from_version = s.from_version,
          to_version = s.to_version,
          page_number = s.page_number,
          page_count = s.page_count,
          idempotency_key = s.idempotency_key,
          sync_type = s.sync_type,
          applied_at = SYSDATETIMEOFFSET()
 WHEN NOT MATCHED THEN INSERT
      (destination_name, object_name, from_version, to_version, page_number, page_count,
       idempotency_key, sync_type, applied_at)
      VALUES (s.destination_name, s.object_name, s.from_version, s.to_version, s.page_number,
              s.page_count, s.idempotency_key, s.sync_type, SYSDATETIMEOFFSET())
OUTPUT deleted.from_version, deleted.to_version, deleted.page_number, deleted.page_count,
       deleted.sync_type;

-- upsert, every column
MERGE [sales].[Order Lines] WITH (HOLDLOCK) AS t
USING (VALUES (?, ?, ?, ?, ?)) AS s ([order_id], [line], [Product Name], [qty], [price])
   ON t.[order_id] = s.[order_id]
  AND t.[line] = s.[line]
 WHEN MATCHED THEN UPDATE
      SET [Product Name] = s.[Product Name],
          [qty] = s.[qty],
          [price] = s.[price]
 WHEN NOT MATCHED THEN INSERT ([order_id], [line], [Product Name], [qty], [price])
      VALUES (s.[order_id], s.[line], s.[Product Name], s.[qty], s.[price]);

-- upsert, every column, three rows in one statement
MERGE [sales].[Order Lines] WITH (HOLDLOCK) AS t
USING (VALUES (?, ?, ?, ?, ?),
              (?, ?, ?, ?, ?),
              (?, ?, ?, ?, ?)) AS s ([order_id], [line], [Product Name], [qty], [price])
   ON t.[order_id] = s.[order_id]
  AND t.[line] = s.[line]
 WHEN MATCHED THEN UPDATE
      SET [Product Name] = s.[Product Name],
          [qty] = s.[qty],
          [price] = s.[price]
 WHEN NOT MATCHED THEN INSERT ([order_id], [line], [Product Name], [qty], [price])
      VALUES (s.[order_id], s.[line], s.[Product Name], s.[qty], s.[price]);

-- upsert, the key and the first other column
MERGE [sales].[Order Lines] WITH (HOLDLOCK) AS t
USING (VALUES (?, ?, ?)) AS s ([order_id], [line], [Product Name])
   ON t.[order_id] = s.[order_id]
  AND t.[line] = s.[line]
 WHEN MATCHED THEN UPDATE
      SET [Product Name] = s.[Product Name]
 WHEN NOT MATCHED THEN INSERT ([order_id], [line], [Product Name])
      VALUES (s.[order_id], s.[line], s.[Product Name]);

-- update of some columns ($changed, updates only)
UPDATE [sales].[Order Lines]
   SET [Product Name] = ?
 WHERE [order_id] = ?
   AND [line] = ?

-- upsert, the key only
MERGE [sales].[Order Lines] WITH (HOLDLOCK) AS t
USING (VALUES (?, ?)) AS s ([order_id], [line])
   ON t.[order_id] = s.[order_id]
  AND t.[line] = s.[line]
 WHEN NOT MATCHED THEN INSERT ([order_id], [line])
      VALUES (s.[order_id], s.[line]);

-- delete
DELETE t
  FROM [sales].[Order Lines] AS t
  JOIN (VALUES (?, ?)) AS d ([order_id], [line])
    ON t.[order_id] = d.[order_id]
   AND t.[line] = d.[line]

-- delete, three rows in one statement
DELETE t
  FROM [sales].[Order Lines] AS t
  JOIN (VALUES (?, ?),
              (?, ?),
              (?, ?)) AS d ([order_id], [line])
    ON t.[order_id] = d.[order_id]
   AND t.[line] = d.[line]

-- FULL: replace the content
-- A FULL export replaces the table's content; DELETE (not TRUNCATE) so that readers keep seeing
-- the old content until the transaction that writes the new one commits.
DELETE FROM [sales].[Order Lines]

-- FULL: stage a page
INSERT INTO [tidemark].[tidemark_destination_stage] (destination_name, object_name, page_number, ordinal, change_json)
VALUES (?, ?, ?, ?, ?)

-- FULL: read a staged page
SELECT change_json
  FROM [tidemark].[tidemark_destination_stage]
 WHERE destination_name = ?
   AND object_name = ?
   AND page_number = ?
 ORDER BY ordinal

-- FULL: forget the staged pages
DELETE FROM [tidemark].[tidemark_destination_stage]
 WHERE destination_name = ?
   AND object_name = ?

