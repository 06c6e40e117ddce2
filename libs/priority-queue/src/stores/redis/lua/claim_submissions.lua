-- claim_submissions: claims up to `limit` PENDING_SUBMIT tasks, each time the first admissible
-- candidate in DESIGN §2 order (LANES.md: only lane heads compete; a refused lane parks on the
-- resource that refused it, so it never blocks later candidates). Admission (pause, GCRA rate,
-- account, tenant, concurrency key) is checked and consumed here, each claim counting against
-- the next. A head past its deadline becomes TIMED_OUT without admission or token.
-- Cost: O((k + parkings + timeouts) * log n), plus moving due delayed tasks into their lanes.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: delayed, ready, laneready, lanepark, parkedres, ratewake, leases,
--       deadlines, finished, pendcount, inflight_*, gcra, lim_*
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

-- Limits and counters read once per call and kept up to date here (this script is the only
-- writer while it runs).
local provCache, limCache, useCache = {}, {}, {}
local function providerLimits(prov)
  local pl = provCache[prov]
  if not pl then
    pl = redis.call('HMGET', dk('provider', prov), 'paused', 'qps', 'burst', 'accountConcurrency')
    pl.tat = tonumber(redis.call('HGET', K.gcra, prov)) or 0
    provCache[prov] = pl
  end
  return pl
end
local function limitOf(key, field)
  local c = limCache[key]
  if not c then
    c = {}
    limCache[key] = c
  end
  local v = c[field]
  if v == nil then
    v = tonumber(redis.call('HGET', key, field)) or false
    c[field] = v
  end
  return v
end
local function inUse(key, field)
  local c = useCache[key]
  if not c then
    c = {}
    useCache[key] = c
  end
  local v = c[field]
  if v == nil then
    v = tonumber(redis.call('HGET', key, field)) or 0
    c[field] = v
  end
  return v
end
local function use(key, field)
  local c = useCache[key]
  if not c then
    c = {}
    useCache[key] = c
  end
  c[field] = redis.call('HINCRBY', key, field, 1)
end

-- First limit of a lane without room: returns the resource to park on (and for a rate refusal
-- the time the next token is due), or nil plus the provider's new GCRA TAT (or nil).
local function admit(prov, acct, ten, ck)
  local pl = providerLimits(prov)
  if pl[1] == '1' then return 'p' .. SEP .. prov end
  local qps, tat = tonumber(pl[2]), nil
  if qps then
    local burst = tonumber(pl[3]) or 1
    local interval = 1000 / qps
    local nxt = math.max(pl.tat, NOW) + interval
    if nxt - NOW > burst * interval + 1e-9 then return 'r' .. SEP .. prov, nxt - burst * interval end
    tat = nxt
  end
  if acct then
    local ak = prov .. SEP .. acct
    local lim = limitOf(K.lim_a, ak) or tonumber(pl[4])
    if lim and inUse(K.inflight_a, ak) >= lim then return 'a' .. SEP .. ak end
  end
  if ten then
    local lim = limitOf(K.lim_t, ten) or limitOf(K.lim_meta, 'defaultTenantQuota')
    if lim and inUse(K.inflight_t, ten) >= lim then return 't' .. SEP .. ten end
  end
  if ck then
    local lim = limitOf(K.lim_c, ck) or 1
    if inUse(K.inflight_c, ck) >= lim then return 'c' .. SEP .. ck end
  end
  return nil, nil, tat
end

-- The head of a ready lane was taken: the lane moves to its next head, or leaves ready.
local function advanceLane(lane, readyMember, headMember, pri, id)
  local lk = dk('lane', lane)
  redis.call('ZREM', lk, headMember)
  redis.call('ZREM', dk('due', pri), id)
  redis.call('ZREM', K.ready, readyMember)
  local head = redis.call('ZRANGE', lk, 0, 0)[1]
  if head then
    local m = string.sub(head, 1, KEYW) .. lane
    redis.call('ZADD', K.ready, 0, m)
    redis.call('HSET', K.laneready, lane, m)
  else
    redis.call('HDEL', K.laneready, lane)
  end
end

local claimed, timedOut = {}, {}
local leaseUntil = fmt(NOW + leaseMs)
while not backlog and #claimed < limit do
  local m = redis.call('ZRANGE', K.ready, 0, 0)[1]
  if not m then break end
  local lane = string.sub(m, KEYW + 1)
  local head = redis.call('ZRANGE', dk('lane', lane), 0, 0)[1]
  local id = string.sub(head, KEYW + 1)
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, 'providerKey', 'accountId', 'tenantId', 'concurrencyKey', 'deadlineAt', 'seq', 'priority', 'version')
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
      if tat then
        provCache[f[1]].tat = tat
        redis.call('HSET', K.gcra, f[1], string.format('%.17g', tat))
      end
      -- the stale `_k` field is harmless: enqueue rewrites or removes it when the task is pending again
      advanceLane(lane, m, head, f[7], id)
      moveStatus(id, PENDING, SUBMITTING, f[6], f[7])
      redis.call('HSET', tk, 'status', SUBMITTING, 'leaseOwner', owner, 'leaseId', lbase .. (#claimed + 1),
        'leaseUntil', leaseUntil, 'updatedAt', fmt(NOW), 'version', fmt(tonumber(f[8]) + 1))
      redis.call('ZADD', K.leases, leaseUntil, id)
      redis.call('HINCRBY', K.inflight_p, f[1], 1)
      if f[2] then use(K.inflight_a, f[1] .. SEP .. f[2]) end
      if f[3] then use(K.inflight_t, f[3]) end
      if f[4] then use(K.inflight_c, f[4]) end
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
