-- Keys compared exactly, MySQL / MariaDB: the columns that hold a caller's key (idempotency
-- key, provider, account, tenant, concurrency key, the resource keys built from them) use the
-- server's NO PAD binary collation, so 'acme' and 'acme ' are separate tenants, accounts, keys
-- and idempotency keys as on every other store (utf8mb4_bin, the tables' default, is PAD SPACE:
-- it compares them equal in every comparison, join, GROUP BY and unique index).
-- `utf8mb4_nopad_bin` (MariaDB 10.2+) or `utf8mb4_0900_bin` (MySQL 8.0+) have different names,
-- so the statements pick the first one the server has and ALTER the columns through a prepared
-- statement (the tables are new and empty here: no rebuild cost). A server with neither fails
-- with an "Unknown collation" that says what is needed. Run again, it changes nothing.
SET @pq_collation = (SELECT COLLATION_NAME FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin') ORDER BY FIELD(COLLATION_NAME, 'utf8mb4_nopad_bin', 'utf8mb4_0900_bin') LIMIT 1);
SET @pq_collation = COALESCE(@pq_collation, 'no NO PAD binary collation (utf8mb4_nopad_bin or utf8mb4_0900_bin) on this server: MariaDB 10.6+ or MySQL 8 is needed');

SET @pq_ddl = CONCAT('ALTER TABLE {{prefix}}tasks',
' MODIFY idempotency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL,',
' MODIFY provider_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NOT NULL,',
' MODIFY account_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL,',
' MODIFY tenant_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL,',
' MODIFY concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL');
PREPARE pq_ddl FROM @pq_ddl;
EXECUTE pq_ddl;
DEALLOCATE PREPARE pq_ddl;

SET @pq_ddl = CONCAT('ALTER TABLE {{prefix}}lanes',
' MODIFY provider_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NOT NULL,',
' MODIFY account_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL,',
' MODIFY tenant_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL,',
' MODIFY concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL,',
' MODIFY parked_on VARCHAR(520) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NULL');
PREPARE pq_ddl FROM @pq_ddl;
EXECUTE pq_ddl;
DEALLOCATE PREPARE pq_ddl;

SET @pq_ddl = CONCAT('ALTER TABLE {{prefix}}resources MODIFY rkey VARCHAR(520) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NOT NULL');
PREPARE pq_ddl FROM @pq_ddl;
EXECUTE pq_ddl;
DEALLOCATE PREPARE pq_ddl;

SET @pq_ddl = CONCAT('ALTER TABLE {{prefix}}fair_tags MODIFY tenant_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NOT NULL');
PREPARE pq_ddl FROM @pq_ddl;
EXECUTE pq_ddl;
DEALLOCATE PREPARE pq_ddl;

SET @pq_ddl = CONCAT('ALTER TABLE {{prefix}}tenant_weights MODIFY tenant_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ', @pq_collation, ' NOT NULL');
PREPARE pq_ddl FROM @pq_ddl;
EXECUTE pq_ddl;
DEALLOCATE PREPARE pq_ddl;
