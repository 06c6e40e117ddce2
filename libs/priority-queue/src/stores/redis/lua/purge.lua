-- purge: deletes up to `limit` terminal tasks with finishedAt <= olderThan (and their
-- idempotency keys); the history is a field of the task hash.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: finished, idem, boosts
-- ARGV[4] olderThan (ms), ARGV[5] limit
-- Returns: the number of tasks deleted
local n = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.finished, '-inf', ARGV[4], 'LIMIT', 0, tonumber(ARGV[5]))) do
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, 'status', 'idempotencyKey', 'boostAt', 'seq')
  if f[1] then redis.call('ZREM', dk('status', f[1]), id) end
  -- a boost still unfired (its task finished before boostAt; a retry would have brought it back)
  if f[3] then redis.call('ZREM', K.boosts, boostMember(tonumber(f[4]), id)) end
  if f[2] and redis.call('HGET', K.idem, f[2]) == id then redis.call('HDEL', K.idem, f[2]) end
  redis.call('DEL', tk)
  redis.call('ZREM', K.finished, id)
  n = n + 1
end
return n
