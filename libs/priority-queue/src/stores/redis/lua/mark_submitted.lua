-- mark_submitted: the provider accepted a submit: SUBMITTING -> SUBMITTED | RUNNING, externalId
-- set, nextPollAt = now + pollDelayMs, lease cleared, slots kept. Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, polls
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version, ARGV[7] externalId, ARGV[8] status,
--         ARGV[9] pollDelayMs
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE, PQ_STATE <status>
local id = ARGV[4]
local st = fenced(id, ARGV[5], ARGV[6])
if st ~= SUBMITTING then fail('PQ_STATE ' .. st) end
local tk = dk('task', id)
local f = redis.call('HMGET', tk, 'seq', 'priority')
clearLease(id)
moveStatus(id, st, ARGV[8], f[1], f[2])
redis.call('HSET', tk, 'status', ARGV[8], 'externalId', ARGV[7], 'nextPollAt', fmt(NOW + tonumber(ARGV[9])), 'updatedAt', NOWS)
local v = redis.call('HINCRBY', tk, 'version', '1')
if HIST > 0 then hist(id, st, ARGV[8], v) end
schedulePoll(id)
return taskOf(id)
