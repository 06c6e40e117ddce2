-- requeue: a FAILED, TIMED_OUT, CANCELED or SUBMIT_UNKNOWN task goes back to PENDING_SUBMIT as a
-- fresh attempt (core/requeue.ts): attempts, pollErrors, cancelRequested, error, result,
-- externalId, nextPollAt, finishedAt and the old lease fields cleared; runAt = now; deadlineAt
-- moved to now + its original timeout; priority, createdAt, seq kept; version + 1; back in its
-- lane (or the delayed set) and the status / deadline indexes; out of the finished set (purge)
-- and of a removal's kept set.
-- Slots: a finished task holds none, so none are touched. History: one transition.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: finished, deadlines, status:*,
--       pendcount, ready, laneready, lanepark, lane:*, delayed, due:* (aging), kept:*
-- ARGV[4] id
-- Returns: { the status it had, the task (HGETALL) }; errors PQ_NOTFOUND, PQ_STATE <status>
local RETRYABLE = { FAILED = true, TIMED_OUT = true, CANCELED = true, SUBMIT_UNKNOWN = true }
local id = ARGV[4]
local tk = dk('task', id)
local f = redis.call('HMGET', tk, 'status', 'seq', 'priority', 'createdAt', 'deadlineAt', 'version', '_r')
if not f[1] then fail('PQ_NOTFOUND') end
if not RETRYABLE[f[1]] then fail('PQ_STATE ' .. f[1]) end
local nowS = NOWS
local version = tonumber(f[6]) + 1
redis.call('ZREM', K.finished, id)
if f[7] then redis.call('ZREM', f[7], id) end
moveStatus(id, f[1], PENDING, f[2], f[3])
redis.call('HDEL', tk, 'error', 'result', 'externalId', 'nextPollAt', 'finishedAt', 'attempts', 'pollErrors',
  'cancelRequested', 'leaseOwner', 'leaseId', 'leaseUntil', '_r')
local set = { 'status', PENDING, 'runAt', nowS, 'updatedAt', nowS, 'version', fmt(version) }
if f[5] then
  local deadline = fmt(NOW + tonumber(f[5]) - tonumber(f[4]))
  set[#set + 1] = 'deadlineAt'
  set[#set + 1] = deadline
  redis.call('ZADD', K.deadlines, deadline, id)
end
redis.call('HSET', tk, unpack(set))
if HIST > 0 then hist(id, f[1], PENDING, version, false) end
enqueueStored(id)
wake()
return { f[1], taskOf(id) }
