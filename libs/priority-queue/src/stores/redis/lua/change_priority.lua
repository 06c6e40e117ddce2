-- change_priority: PENDING_SUBMIT only: sets priority atomically with every index, version + 1.
-- With fair share, a change to another level re-tags the task there (lib.lua reprioritize).
-- A deadline boost of the task that is due (boostAt <= now) and has not fired fires unused:
-- the explicit priority wins (core/boost.ts); before boostAt it stays and fires later.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: ready, laneready, lanepark, pendcount, boosts,
--       fairv, fairf, lim_w (fair share)
-- ARGV[4] id, ARGV[5] priority (int32)
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STATE <status>, PQ_FAIRTAG (nothing written)
local id, pri = ARGV[4], tonumber(ARGV[5])
local f = redis.call('HMGET', dk('task', id), unpack(PRI_FIELDS))
if not f[7] then fail('PQ_NOTFOUND') end
if f[7] ~= PENDING then fail('PQ_STATE ' .. f[7]) end
reprioritize(id, f, pri) -- first: a re-tag that overflows fails before any write
if f[9] and tonumber(f[9]) <= NOW then redis.call('ZREM', K.boosts, boostMember(tonumber(f[4]), id)) end
return taskOf(id)
