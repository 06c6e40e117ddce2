-- The migrations applied under this prefix (one row per version), created before any of them.
CREATE TABLE IF NOT EXISTS {{prefix}}schema_version (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
