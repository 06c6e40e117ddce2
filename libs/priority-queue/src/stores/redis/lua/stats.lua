-- stats: counts per status, pending per priority with the oldest due wait, in-flight counts.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: status:*, leases, laneready, lanepark, lane:*, due:* (aging or
--       fair share), pendcount, inflight_p, inflight_a, inflight_t, inflight_c
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
-- oldest due wait per priority: without aging the lanes give it (a lane's first member of a
-- priority is its oldest due task of that priority: one BYLEX probe per priority present in each
-- lane, ready or parked); with aging or fair share (where the first member is the smallest aged
-- key / tag, not the oldest) from the due set of each priority (keys.ts `due`)
local oldest = {}
if not DUESETS then
  local seen = {}
  for _, h in ipairs({ K.laneready, K.lanepark }) do
    for _, lane in ipairs(redis.call('HKEYS', h)) do
      if not seen[lane] then
        seen[lane] = true
        local lk, lo = dk('lane', lane), '-'
        while true do
          local m = redis.call('ZRANGE', lk, lo, '+', 'BYLEX', 'LIMIT', '0', '1')[1]
          if not m then break end
          local ph = string.sub(m, 1, 8)
          local runAt = tonumber(string.sub(m, 9, 22), 16) - TWO52
          if not oldest[ph] or runAt < oldest[ph] then oldest[ph] = runAt end
          lo = '(' .. ph .. '\255' -- past every member of this priority
        end
      end
    end
  end
end
local pend = {}
local pc = redis.call('HGETALL', K.pendcount)
for i = 1, #pc, 2 do
  local o
  if not DUESETS then
    o = oldest[string.format('%08x', 2147483647 - tonumber(pc[i]))]
  else
    o = tonumber(redis.call('ZRANGE', dk('due', pc[i]), '0', '0', 'WITHSCORES')[2])
  end
  local wait = 0
  if o then wait = math.max(0, NOW - o) end
  pend[#pend + 1] = pc[i]
  pend[#pend + 1] = pc[i + 1]
  pend[#pend + 1] = fmt(wait)
end
return { NOWS, counts, pend, redis.call('HGETALL', K.inflight_p), redis.call('HGETALL', K.inflight_a),
  redis.call('HGETALL', K.inflight_t), redis.call('HGETALL', K.inflight_c) }
