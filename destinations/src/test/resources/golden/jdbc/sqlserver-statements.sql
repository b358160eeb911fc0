-- lock the position row
-- Creates the row on first use; otherwise a no-op update that locks it until the page commits,
-- so two deliveries of one page (two processes) are applied one after the other.
MERGE [tidemark].[tidemark_destination_position] WITH (HOLDLOCK) AS p
USING (SELECT CAST(? AS NVARCHAR(200) COLLATE Latin1_General_100_BIN2) AS destination_name,
              CAST(? AS NVARCHAR(200) COLLATE Latin1_General_100_BIN2) AS object_name) AS s
   ON p.destination_name = s.destination_name
  AND p.object_name = s.object_name
 WHEN MATCHED THEN UPDATE
      SET applied_at = p.applied_at
 WHEN NOT MATCHED THEN INSERT (destination_name, object_name)
      VALUES (s.destination_name, s.object_name)
OUTPUT inserted.from_version, inserted.to_version, inserted.page_number, inserted.page_count,
       inserted.sync_type;

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

-- upsert, the key and the first other column ($changed)
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
DELETE FROM [sales].[Order Lines]
 WHERE [order_id] = ?
   AND [line] = ?

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

-- write the position
UPDATE [tidemark].[tidemark_destination_position]
   SET from_version = ?,
       to_version = ?,
       page_number = ?,
       page_count = ?,
       idempotency_key = ?,
       sync_type = ?,
       applied_at = SYSDATETIMEOFFSET()
 WHERE destination_name = ?
   AND object_name = ?

