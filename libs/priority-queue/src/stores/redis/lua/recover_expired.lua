-- recover_expired: one recovery sweep (any worker may run it), up to `limit` tasks:
-- * SUBMITTING with an expired lease: a failed attempt (attempts + 1) whatever comes next:
--   idempotent -> PENDING_SUBMIT (runAt kept), or FAILED once attempts + 1 >= maxAttempts, or
--   CANCELED when its cancel was requested; non-idempotent -> SUBMIT_UNKNOWN. Slots freed.
-- * SUBMITTED / RUNNING with an expired lease: lease cleared (version + 1), poll retried; not reported.
-- * any non-terminal task past its deadline without a live lease -> TIMED_OUT (slots freed).
-- With a sweep lease (sweepExpired): nothing at all while the lease is live; else the sweep, and
-- when it changed anything the lease is taken until NOW + leaseMs, so that the other workers of the
-- queue skip their sweeps until it lapses.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, deadlines, polls, delayed, ready, laneready, lanepark,
--       parkedres, pendcount, inflight_*, finished, sweep
-- ARGV[4] limit
-- ARGV[5] sweep lease length in ms, or '' (recoverExpired: no lease)
-- ARGV[6] owner recorded with the lease ('' without a lease)
-- Returns: { { from, to, HGETALL }, ... } for the status transitions made; -1 when a sweep lease is live
local limit = tonumber(ARGV[4])
local leaseMs = tonumber(ARGV[5])
if leaseMs then
  local untilAt = tonumber(redis.call('HGET', K.sweep, 'until'))
  if untilAt and untilAt > NOW then return -1 end
end
local out = {}
local touched = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.leases, '-inf', NOWS, 'LIMIT', '0', limit)) do
  touched = touched + 1
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, 'status', 'd', 'cancelRequested', 'attempts')
  local st = f[1]
  if st == SUBMITTING then
    local to
    local attempts = fmt((tonumber(f[4]) or 0) + 1)
    -- maxAttempts and idempotent: the last two values of `d` (codec.ts dJson), not fields of their own
    local maxAttempts, idempotent = string.match(string.sub(f[2], -24), ',(%d+),(%a+)%]$')
    if idempotent ~= 'true' then
      to = 'SUBMIT_UNKNOWN'
      finalize(id, to, { 'attempts', attempts, 'error', 'submit lease expired: the outcome of the submit is unknown' })
    elseif f[3] == '1' then
      to = 'CANCELED'
      finalize(id, to, { 'attempts', attempts })
    elseif tonumber(attempts) >= tonumber(maxAttempts) then
      to = 'FAILED'
      finalize(id, to, { 'attempts', attempts, 'error', 'submit lease expired on the last attempt' })
    else
      to = PENDING
      requeue(id, tonumber(redis.call('HGET', tk, 'runAt')))
    end
    out[#out + 1] = { st, to, taskOf(id) }
  elseif st == SUBMITTED or st == RUNNING then
    clearLease(id)
    redis.call('HSET', tk, 'updatedAt', NOWS)
    redis.call('HINCRBY', tk, 'version', '1')
    schedulePoll(id)
    WOKE = true
  else
    redis.call('ZREM', K.leases, id)
  end
end

-- deadlines: skip tasks under a live lease (their holder finishes them). No cap on the ones
-- skipped (at most the tasks in flight): the sweep goes on until `limit` are recovered or no
-- past deadline is left, so live leases ahead never hide a task it may recover. Pages of at
-- least 100; `offset` counts the skipped entries (the others leave the set).
local offset = 0
while touched < limit do
  local ids = redis.call('ZRANGEBYSCORE', K.deadlines, '-inf', NOWS, 'LIMIT', offset, math.max(limit - touched, 100))
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    if touched >= limit then break end
    local f = redis.call('HMGET', dk('task', id), 'status', 'leaseUntil')
    local lu = tonumber(f[2])
    if not f[1] or TERMINAL[f[1]] then
      redis.call('ZREM', K.deadlines, id)
    elseif lu and lu > NOW then
      offset = offset + 1
    else
      finalize(id, 'TIMED_OUT')
      out[#out + 1] = { f[1], 'TIMED_OUT', taskOf(id) }
      touched = touched + 1
    end
  end
end
if leaseMs and touched > 0 then redis.call('HSET', K.sweep, 'until', fmt(NOW + leaseMs), 'owner', ARGV[6]) end
wake()
return out
