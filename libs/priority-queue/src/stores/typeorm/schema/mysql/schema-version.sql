-- The migrations applied under this prefix (one row per version), created before any of them.
CREATE TABLE IF NOT EXISTS {{prefix}}schema_version (version INTEGER NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, applied_at BIGINT NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
