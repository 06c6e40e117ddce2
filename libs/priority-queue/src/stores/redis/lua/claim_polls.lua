-- claim_polls: leases up to `limit` SUBMITTED / RUNNING tasks whose poll is due (or whose cancel
-- was requested) and that hold no live lease, earliest poll first. Status and slots unchanged.
-- Every poll lease that expired is made claimable first (recover_expired would do the same),
-- whatever the number of expired submit leases ahead of it: those are skipped (left to
-- recover_expired; at most the tasks in flight), pages of 1000, `offset` counting the skipped.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, polls
-- ARGV[4] owner, ARGV[5] limit, ARGV[6] leaseMs, ARGV[7] lease id prefix (unique per call)
-- Returns: the claimed tasks (HGETALL each)
local owner, limit, leaseMs, lbase = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local offset = 0
repeat
  local ids = redis.call('ZRANGEBYSCORE', K.leases, '-inf', NOWS, 'LIMIT', offset, '1000')
  for _, id in ipairs(ids) do
    local st = redis.call('HGET', dk('task', id), 'status')
    if st == SUBMITTED or st == RUNNING then
      clearLease(id)
      schedulePoll(id)
    else
      offset = offset + 1
    end
  end
until #ids < 1000
local out = {}
for i, id in ipairs(redis.call('ZRANGEBYSCORE', K.polls, '-inf', NOWS, 'LIMIT', '0', limit)) do
  redis.call('ZREM', K.polls, id)
  setLease(id, owner, lbase .. i, leaseMs)
  out[#out + 1] = taskOf(id)
end
return out
