-- renew_lease: extends a held lease to now + leaseMs. Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases
-- ARGV[4] id, ARGV[5] leaseId, ARGV[6] version, ARGV[7] leaseMs
-- Returns: the task (HGETALL); errors PQ_NOTFOUND, PQ_STALE
local id = ARGV[4]
fenced(id, ARGV[5], ARGV[6])
local tk = dk('task', id)
local leaseMs = tonumber(ARGV[7])
setLease(id, redis.call('HGET', tk, 'leaseOwner'), ARGV[5], leaseMs)
return taskOf(id)
