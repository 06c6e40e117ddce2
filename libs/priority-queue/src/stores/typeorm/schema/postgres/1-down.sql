-- Down of schema version 1, PostgreSQL: removes everything 1-*.sql created, the data of every
-- queue under this prefix with it, and the bookkeeping table. Functions first: claim_polls
-- returns the tasks row type.
DROP TRIGGER IF EXISTS {{prefix}}tasks_history ON {{prefix}}tasks;
DROP FUNCTION IF EXISTS {{prefix}}task_history();
DROP FUNCTION IF EXISTS {{prefix}}complete_and_claim(varchar, bigint[], varchar[], tid[], varchar[], integer[], varchar[], text[], text[], integer[], bigint, integer, bigint, varchar, varchar, integer, integer, bigint, boolean);
DROP FUNCTION IF EXISTS {{prefix}}claim(varchar, bigint, integer, bigint, varchar, varchar, integer, integer, bigint, boolean);
DROP FUNCTION IF EXISTS {{prefix}}complete_leased(varchar, bigint[], varchar[], tid[], varchar[], integer[], varchar[], text[], text[], integer[]);
DROP FUNCTION IF EXISTS {{prefix}}claim_polls(varchar, bigint, integer, bigint, varchar, varchar);
DROP FUNCTION IF EXISTS {{prefix}}fair_tag(varchar, varchar[], integer[]);
DROP FUNCTION IF EXISTS {{prefix}}next_finish_tag(bigint, bigint, bigint);
DROP TABLE IF EXISTS {{prefix}}fair_levels, {{prefix}}fair_tags, {{prefix}}tenant_weights, {{prefix}}sweeps, {{prefix}}lane_marks, {{prefix}}releases, {{prefix}}resources, {{prefix}}lanes, {{prefix}}tasks, {{prefix}}queues;
DROP TABLE IF EXISTS {{prefix}}schema_version;
