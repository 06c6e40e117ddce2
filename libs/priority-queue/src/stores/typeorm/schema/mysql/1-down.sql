-- Down of schema version 1, MySQL / MariaDB: removes everything 1-*.sql created, the data of
-- every queue under this prefix with it, and the bookkeeping table.
DROP TRIGGER IF EXISTS {{prefix}}tasks_history;
DROP TABLE IF EXISTS {{prefix}}sweeps, {{prefix}}fair_levels, {{prefix}}fair_tags, {{prefix}}tenant_weights, {{prefix}}stage_marks, {{prefix}}releases, {{prefix}}resources, {{prefix}}lanes, {{prefix}}tasks, {{prefix}}queues;
DROP TABLE IF EXISTS {{prefix}}schema_version;
