-- init: records the store settings fixed for the queue's life (agingIntervalMs, fairness); the
-- caller refuses a store whose settings differ from the recorded ones. A queue recorded before
-- fairness was kept (agingIntervalMs there, fairness not) was written without fair share: 'off'.
-- Migrates data of earlier layouts: the status set of SUBMITTING (no longer kept: those tasks
-- are found through the lease set) is deleted, and so are the due sets per priority of a queue
-- without aging or fair share (stats reads its lanes instead).
-- Marks the key space with its key layout (keys.ts KEY_LAYOUT).
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: meta, status:SUBMITTING, pendcount, due:*
-- ARGV[4]  keys.ts KEY_LAYOUT
-- Returns: { agingIntervalMs, fairness ('tenant' | 'off') } recorded for the queue; the caller compares.
redis.call('DEL', dk('status', SUBMITTING))
local fairness = 'off'
if FAIR then fairness = 'tenant' end
if redis.call('HSETNX', K.meta, 'agingIntervalMs', fmt(AGING)) == 1 then
  redis.call('HSET', K.meta, 'fairness', fairness)
else
  redis.call('HSETNX', K.meta, 'fairness', 'off')
end
redis.call('HSET', K.meta, 'keys', ARGV[4])
local recorded = redis.call('HMGET', K.meta, 'agingIntervalMs', 'fairness')
if AGING == 0 and not FAIR and tonumber(recorded[1]) == 0 and recorded[2] == 'off' then
  -- a due set holds pending tasks only, so every one is named in pendcount
  for _, p in ipairs(redis.call('HKEYS', K.pendcount)) do redis.call('UNLINK', dk('due', p)) end
end
return recorded
