-- release: the holder gives a claimed task back untouched (it never started): SUBMITTING ->
-- PENDING_SUBMIT with attempts, runAt, priority and error unchanged, lease cleared, slots freed,
-- back in its place in the order. A task whose cancel was requested becomes CANCELED instead.
-- Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, delayed, ready, laneready, lanepark, parkedres, pendcount,
--       inflight_*, deadlines, finished
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE, PQ_STATE <status>
local id = ARGV[4]
local st = fenced(id, ARGV[5], ARGV[6])
if st ~= SUBMITTING then fail('PQ_STATE ' .. st) end
if redis.call('HGET', dk('task', id), 'cancelRequested') == '1' then
  finalize(id, 'CANCELED')
else
  unclaim(id)
end
wake()
return taskOf(id)
