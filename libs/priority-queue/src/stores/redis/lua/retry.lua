-- retry: a failed submit to try again: SUBMITTING -> PENDING_SUBMIT, attempts + 1, runAt = now +
-- delayMs, error recorded, lease cleared, slots freed; priority unchanged. A task whose cancel
-- was requested becomes CANCELED instead (its failed attempt counted all the same). Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, delayed, ready, laneready, lanepark, parkedres, pendcount,
--       inflight_*, deadlines, finished
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version, ARGV[7] delayMs, ARGV[8] error
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE, PQ_STATE <status>
local id = ARGV[4]
local st = fenced(id, ARGV[5], ARGV[6])
if st ~= SUBMITTING then fail('PQ_STATE ' .. st) end
local tk = dk('task', id)
if redis.call('HGET', tk, 'cancelRequested') == '1' then
  redis.call('HINCRBY', tk, 'attempts', '1')
  finalize(id, 'CANCELED', { 'error', ARGV[8] })
else
  requeue(id, NOW + math.max(0, tonumber(ARGV[7])), { 'error', ARGV[8] })
end
wake()
return taskOf(id)
