-- claim_submissions: claims up to `limit` PENDING_SUBMIT tasks, each time the first admissible
-- candidate in DESIGN §2 order (LANES.md: only lane heads compete; a refused lane parks on the
-- resource that refused it, so it never blocks later candidates). Admission (pause, GCRA rate,
-- account, tenant, concurrency key) is checked and consumed here, each claim counting against
-- the next. A head past its deadline becomes TIMED_OUT without admission or token.
-- Cost: O((k + parkings + timeouts) * log n), plus moving due delayed tasks into their lanes.
-- KEYS: fixed keys (used: delayed, ready, laneready, lanepark, parkedres, ratewake, leases,
--       deadlines, finished, pendcount, inflight_*, gcra, lim_*)
-- ARGV[4] owner, ARGV[5] limit, ARGV[6] leaseMs, ARGV[7] lease id prefix (unique per call)
-- Returns: { claimed (HGETALL each), timedOut (HGETALL each), nextWakeAt (ms string) or nil }
local owner, limit, leaseMs, lbase = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local MAX_PROMOTE, MAX_TIMEOUTS = 5000, 1000

-- due delayed tasks join their lanes
local due = redis.call('ZRANGEBYSCORE', K.delayed, '-inf', fmt(NOW), 'LIMIT', 0, MAX_PROMOTE)
for _, id in ipairs(due) do
  redis.call('ZREM', K.delayed, id)
  enqueueStored(id)
end
-- more due tasks than one call moves: claim nothing yet (order must stay exact), call again now
local backlog = #due == MAX_PROMOTE and redis.call('ZCOUNT', K.delayed, '-inf', fmt(NOW)) > 0

-- providers whose next rate token is due release their parked lanes
for _, p in ipairs(redis.call('ZRANGEBYSCORE', K.ratewake, '-inf', fmt(NOW))) do
  redis.call('ZREM', K.ratewake, p)
  unpark('r' .. SEP .. p)
end

-- First limit of a lane without room: returns the resource to park on (and for a rate refusal
-- the time the next token is due), or nil plus the provider's new GCRA TAT (or nil).
local function admit(prov, acct, ten, ck)
  local pl = redis.call('HMGET', dk('provider', prov), 'paused', 'qps', 'burst', 'accountConcurrency')
  if pl[1] == '1' then return 'p' .. SEP .. prov end
  local qps, tat = tonumber(pl[2]), nil
  if qps then
    local burst = tonumber(pl[3]) or 1
    local interval = 1000 / qps
    local nxt = math.max(tonumber(redis.call('HGET', K.gcra, prov)) or 0, NOW) + interval
    if nxt - NOW > burst * interval + 1e-9 then return 'r' .. SEP .. prov, nxt - burst * interval end
    tat = nxt
  end
  if acct then
    local ak = prov .. SEP .. acct
    local lim = tonumber(redis.call('HGET', K.lim_a, ak)) or tonumber(pl[4])
    if lim and (tonumber(redis.call('HGET', K.inflight_a, ak)) or 0) >= lim then return 'a' .. SEP .. ak end
  end
  if ten then
    local lim = tonumber(redis.call('HGET', K.lim_t, ten)) or tonumber(redis.call('HGET', K.lim_meta, 'defaultTenantQuota'))
    if lim and (tonumber(redis.call('HGET', K.inflight_t, ten)) or 0) >= lim then return 't' .. SEP .. ten end
  end
  if ck then
    local lim = tonumber(redis.call('HGET', K.lim_c, ck)) or 1
    if (tonumber(redis.call('HGET', K.inflight_c, ck)) or 0) >= lim then return 'c' .. SEP .. ck end
  end
  return nil, nil, tat
end

local claimed, timedOut = {}, {}
while not backlog and #claimed < limit do
  local m = redis.call('ZRANGE', K.ready, 0, 0)[1]
  if not m then break end
  local lane = string.sub(m, KEYW + 1)
  local head = redis.call('ZRANGE', dk('lane', lane), 0, 0)[1]
  local id = string.sub(head, KEYW + 1)
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, 'providerKey', 'accountId', 'tenantId', 'concurrencyKey', 'deadlineAt', 'seq', 'priority')
  local deadline = tonumber(f[5])
  if deadline and deadline <= NOW then
    if #timedOut >= MAX_TIMEOUTS then break end
    finalize(id, 'TIMED_OUT')
    timedOut[#timedOut + 1] = taskOf(id)
  else
    local res, retryAt, tat = admit(f[1], f[2], f[3], f[4])
    if res then
      park(lane, res)
      if retryAt then redis.call('ZADD', K.ratewake, fmt(math.ceil(retryAt)), f[1]) end
    else
      if tat then redis.call('HSET', K.gcra, f[1], string.format('%.17g', tat)) end
      laneDel(id, lane, string.sub(head, 1, KEYW), tonumber(f[7]))
      moveStatus(id, PENDING, SUBMITTING, f[6], f[7])
      redis.call('HSET', tk, 'status', SUBMITTING)
      setLease(id, owner, lbase .. (#claimed + 1), leaseMs)
      takeSlots(f[1], f[2], f[3], f[4])
      claimed[#claimed + 1] = taskOf(id)
    end
  end
end

-- tell idle workers when due work is left that this call moved in but did not take
WOKE = #due > 0 and redis.call('EXISTS', K.ready) == 1
local nextWake
if backlog then
  nextWake = NOW
else
  local d = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')[2]
  local r = redis.call('ZRANGE', K.ratewake, 0, 0, 'WITHSCORES')[2]
  if d then nextWake = tonumber(d) end
  if r and (not nextWake or tonumber(r) < nextWake) then nextWake = tonumber(r) end
end
wake()
if nextWake then return { claimed, timedOut, fmt(nextWake) } end
return { claimed, timedOut }
