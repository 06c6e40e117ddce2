-- purge: deletes up to `limit` terminal tasks with finishedAt <= olderThan (and their
-- idempotency keys, an unfired boost, their place in a removal's kept set: lib.lua deleteTask);
-- the history is a field of the task hash.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: finished, idem, boosts, status:*, kept:*
-- ARGV[4] olderThan (ms), ARGV[5] limit
-- Returns: the number of tasks deleted
local n = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.finished, '-inf', ARGV[4], 'LIMIT', '0', tonumber(ARGV[5]))) do
  deleteTask(id)
  n = n + 1
end
return n
