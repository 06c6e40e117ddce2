-- explain: what the next claim would see of one task, read in one step (the decision is
-- core/explain.ts, made by the caller): the task, the limits, the GCRA state and the slots in
-- use, and per lane the number of its due tasks ranked before the task. Due delayed tasks are
-- moved into their lanes first, as a claim would (up to 5,000: beyond that the caller is told).
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: task:<id>, delayed, ready,
--       laneready, lanepark, lane:*, due:* (aging, fair share), providers, provider:*, lim_*, gcra,
--       inflight_a, inflight_t, inflight_c
-- ARGV[4] id
-- Returns: { now, HGETALL of the task, limits (lib.lua limitsSnapshot), HGETALL gcra,
--            HGETALL inflight_a, HGETALL inflight_t, HGETALL inflight_c,
--            { laneId, count, ... } (lanes with a count > 0; only for a due PENDING_SUBMIT task),
--            1 when due delayed tasks were left unmoved else 0 }; error PQ_NOTFOUND
local id = ARGV[4]
local tk = dk('task', id)
if redis.call('EXISTS', tk) == 0 then fail('PQ_NOTFOUND') end
local backlog = promoteDue(5000)
local f = redis.call('HMGET', tk, 'status', 'runAt', 'priority', 'createdAt', 'seq', '_k', 'fairTag')
local lanes = {}
if f[1] == PENDING and tonumber(f[2]) <= NOW then
  local k = f[6] or orderKey(tonumber(f[3]), tonumber(f[2]), tonumber(f[4]), tonumber(f[5]), f[7])
  local before = '(' .. k -- members sort as key .. id: every member of a better key is below it
  for _, lane in ipairs(laneIds()) do
    local n = redis.call('ZLEXCOUNT', dk('lane', lane), '-', before)
    if n > 0 then
      lanes[#lanes + 1] = lane
      lanes[#lanes + 1] = n
    end
  end
end
wake()
local flag = 0
if backlog then flag = 1 end
return { NOWS, taskOf(id), limitsSnapshot(), redis.call('HGETALL', K.gcra), redis.call('HGETALL', K.inflight_a),
  redis.call('HGETALL', K.inflight_t), redis.call('HGETALL', K.inflight_c), lanes, flag }
