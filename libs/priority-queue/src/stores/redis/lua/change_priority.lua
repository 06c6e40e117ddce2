-- change_priority: PENDING_SUBMIT only: sets priority atomically with every index, version + 1.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: ready, laneready, lanepark, pendcount
-- ARGV[4] id, ARGV[5] priority (int32)
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STATE <status>
local id, pri = ARGV[4], tonumber(ARGV[5])
local tk = dk('task', id)
local f = redis.call('HMGET', tk, 'status', 'priority', 'runAt', 'createdAt', 'seq', '_l', '_k')
if not f[1] then fail('PQ_NOTFOUND') end
if f[1] ~= PENDING then fail('PQ_STATE ' .. f[1]) end
local old = tonumber(f[2])
if f[7] then laneDel(id, f[6], f[7], old) end
hincr(K.pendcount, fmt(old), -1)
redis.call('HINCRBY', K.pendcount, fmt(pri), 1)
redis.call('HSET', tk, 'priority', fmt(pri), 'updatedAt', fmt(NOW))
redis.call('HINCRBY', tk, 'version', 1)
if f[7] then laneAdd(id, pri, tonumber(f[3]), tonumber(f[4]), tonumber(f[5]), f[6]) end
return taskOf(id)
