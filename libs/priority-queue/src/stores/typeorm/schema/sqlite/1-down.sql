-- Down of schema version 1, SQLite: removes everything 1-*.sql created, the data of every queue
-- under this prefix with it, and the bookkeeping table.
DROP TRIGGER IF EXISTS {{prefix}}tasks_history;
DROP TABLE IF EXISTS {{prefix}}releases;
DROP TABLE IF EXISTS {{prefix}}resources;
DROP TABLE IF EXISTS {{prefix}}lanes;
DROP TABLE IF EXISTS {{prefix}}tasks;
DROP TABLE IF EXISTS {{prefix}}sweeps;
DROP TABLE IF EXISTS {{prefix}}fair_levels;
DROP TABLE IF EXISTS {{prefix}}fair_tags;
DROP TABLE IF EXISTS {{prefix}}tenant_weights;
DROP TABLE IF EXISTS {{prefix}}queues;
DROP TABLE IF EXISTS {{prefix}}schema_version;
