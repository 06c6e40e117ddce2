-- init: records the store settings fixed for the queue's life; refuses a different aging mode.
-- Migrates data of earlier layouts: the status set of SUBMITTING (no longer kept: those tasks
-- are found through the lease set) is deleted.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: meta, status:SUBMITTING
-- ARGV: common (1-3) only
-- Returns: the agingIntervalMs recorded for the queue (a string); the caller compares.
redis.call('DEL', dk('status', SUBMITTING))
redis.call('HSETNX', K.meta, 'agingIntervalMs', fmt(AGING))
return redis.call('HGET', K.meta, 'agingIntervalMs')
