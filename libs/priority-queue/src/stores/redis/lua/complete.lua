-- complete: terminal transition from a held lease: status, result / error, finishedAt = now,
-- lease cleared, slots freed (publishes a wake when that unparks lanes). Fenced.
-- KEYS: fixed keys (used: leases, polls, deadlines, finished, inflight_*, lanepark, parkedres,
--       ready, laneready)
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version, ARGV[7] terminal status, ARGV[8] result JSON
--         (opt), ARGV[9] error (opt; '~' = unchanged)
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE, PQ_STATE <status>
local id = ARGV[4]
local st = fenced(id, ARGV[5], ARGV[6])
if not INFLIGHT[st] then fail('PQ_STATE ' .. st) end
local tk = dk('task', id)
local result = opt(ARGV[8])
if result then redis.call('HSET', tk, 'result', result) else redis.call('HDEL', tk, 'result') end
if ARGV[9] ~= '~' then
  local e = opt(ARGV[9])
  if e then redis.call('HSET', tk, 'error', e) else redis.call('HDEL', tk, 'error') end
end
finalize(id, ARGV[7])
wake()
return taskOf(id)
