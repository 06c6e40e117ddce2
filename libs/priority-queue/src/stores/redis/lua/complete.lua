-- complete: terminal transition from a held lease: status, result / error, finishedAt = now,
-- lease cleared, slots freed (publishes a wake when that unparks lanes). Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, polls, deadlines, finished, inflight_*, lanepark, parkedres,
--       ready, laneready
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version, ARGV[7] terminal status, ARGV[8] result JSON
--         (opt), ARGV[9] error (opt; '~' = unchanged)
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE, PQ_STATE <status>
local id = ARGV[4]
local f = redis.call('HMGET', dk('task', id), 'leaseId', unpack(FINAL_FIELDS))
if not f[2] then fail('PQ_NOTFOUND') end
if f[1] ~= ARGV[5] or f[10] ~= ARGV[6] then fail('PQ_STALE') end
table.remove(f, 1)
if not INFLIGHT[f[1]] then fail('PQ_STATE ' .. f[1]) end
local extra, dels = {}, {}
local result = opt(ARGV[8])
if result then
  extra[#extra + 1] = 'result'
  extra[#extra + 1] = result
else
  dels[#dels + 1] = 'result'
end
if ARGV[9] ~= '~' then
  local e = opt(ARGV[9])
  if e then
    extra[#extra + 1] = 'error'
    extra[#extra + 1] = e
  else
    dels[#dels + 1] = 'error'
  end
end
finalizeKnown(id, f, ARGV[7], extra, dels)
wake()
return taskOf(id)
