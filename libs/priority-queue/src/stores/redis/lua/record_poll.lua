-- record_poll: a poll said "not done yet" (or failed): status SUBMITTED | RUNNING, nextPollAt =
-- now + nextPollDelayMs, pollErrors set, error set when given, lease cleared. Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, polls
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version, ARGV[7] status, ARGV[8] nextPollDelayMs,
--         ARGV[9] pollErrors, ARGV[10] error (opt; '~' = unchanged)
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE, PQ_STATE <status>
local id = ARGV[4]
local st = fenced(id, ARGV[5], ARGV[6])
if st ~= SUBMITTED and st ~= RUNNING then fail('PQ_STATE ' .. st) end
local tk = dk('task', id)
local f = redis.call('HMGET', tk, 'seq', 'priority')
clearLease(id)
if ARGV[7] ~= st then moveStatus(id, st, ARGV[7], f[1], f[2]) end
redis.call('HSET', tk, 'status', ARGV[7], 'nextPollAt', fmt(NOW + tonumber(ARGV[8])), 'pollErrors', ARGV[9], 'updatedAt', NOWS)
if ARGV[10] ~= '~' then
  local e = opt(ARGV[10])
  if e then redis.call('HSET', tk, 'error', e) else redis.call('HDEL', tk, 'error') end
end
local v = redis.call('HINCRBY', tk, 'version', '1')
if HIST > 0 and ARGV[7] ~= st then hist(id, st, ARGV[7], v) end
schedulePoll(id)
return taskOf(id)
