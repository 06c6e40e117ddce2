-- history: a task's stored transitions (core/history.ts, lib.lua hist) with its creation time.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: task:<id>
-- ARGV[4] id
-- Returns: { createdAt, history text or nil }, or nil when the task does not exist
local f = redis.call('HMGET', dk('task', ARGV[4]), 'createdAt', '_h')
if not f[1] then return false end
return { f[1], f[2] }
