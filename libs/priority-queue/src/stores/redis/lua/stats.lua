-- stats: counts per status, pending per priority with the oldest due wait, in-flight counts.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: status:*, leases, due:*, pendcount, inflight_p, inflight_a, inflight_t, inflight_c
-- ARGV[4..] the statuses to count
-- Returns: { now, { count per status in ARGV order }, { priority, count, oldestWaitMs, ... },
--            HGETALL inflight_p, HGETALL inflight_a, HGETALL inflight_t, HGETALL inflight_c }
local counts = {}
for i = 4, #ARGV do
  if ARGV[i] == SUBMITTING then
    counts[#counts + 1] = #submittingTasks() -- no status set (lib.lua moveStatus): O(leases)
  else
    counts[#counts + 1] = redis.call('ZCARD', dk('status', ARGV[i]))
  end
end
local pend = {}
local pc = redis.call('HGETALL', K.pendcount)
for i = 1, #pc, 2 do
  local oldest = redis.call('ZRANGE', dk('due', pc[i]), 0, 0, 'WITHSCORES')[2]
  local wait = 0
  if oldest then wait = math.max(0, NOW - tonumber(oldest)) end
  pend[#pend + 1] = pc[i]
  pend[#pend + 1] = pc[i + 1]
  pend[#pend + 1] = fmt(wait)
end
return { fmt(NOW), counts, pend, redis.call('HGETALL', K.inflight_p), redis.call('HGETALL', K.inflight_a),
  redis.call('HGETALL', K.inflight_t), redis.call('HGETALL', K.inflight_c) }
