-- init: records the store settings fixed for the queue's life; refuses a different aging mode.
-- Migrates data of earlier layouts: the status set of SUBMITTING (no longer kept: those tasks
-- are found through the lease set) is deleted, and so are the due sets per priority of a queue
-- without aging (stats reads its lanes instead).
-- Marks the key space with its key layout (keys.ts KEY_LAYOUT).
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: meta, status:SUBMITTING, pendcount, due:*
-- ARGV[4]  keys.ts KEY_LAYOUT
-- Returns: the agingIntervalMs recorded for the queue (a string); the caller compares.
redis.call('DEL', dk('status', SUBMITTING))
redis.call('HSETNX', K.meta, 'agingIntervalMs', fmt(AGING))
redis.call('HSET', K.meta, 'keys', ARGV[4])
local recorded = redis.call('HGET', K.meta, 'agingIntervalMs')
if AGING == 0 and tonumber(recorded) == 0 then
  -- a due set holds pending tasks only, so every one is named in pendcount
  for _, p in ipairs(redis.call('HKEYS', K.pendcount)) do redis.call('UNLINK', dk('due', p)) end
end
return recorded
