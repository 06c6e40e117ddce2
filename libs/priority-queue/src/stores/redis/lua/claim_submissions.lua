-- claim_submissions: claims up to `limit` PENDING_SUBMIT tasks, each time the first admissible
-- candidate in DESIGN §2 order (LANES.md: only lane heads compete; a refused lane parks on the
-- resource that refused it, so it never blocks later candidates). Admission (pause, GCRA rate,
-- account, tenant, concurrency key) is checked and consumed here, each claim counting against
-- the next. A head past its deadline becomes TIMED_OUT without admission or token.
-- Deadline boosts due at `now` fire first (lib.lua applyDueBoosts, core/boost.ts), so the order
-- the claim sees has every one of them applied.
-- With fair share (FAIR) each claim advances its level's virtual time to its tag (lib.lua
-- fairClaimed, core/fairness.ts advanceVirtualTime / finishTagObsolete), written once per call.
-- Mirrors (the only server-side copy besides the PostgreSQL claim function): core/claim-loop.ts
-- claimFromLanes (the lane loop), core/lane-admission.ts laneRefusalReason / consumeRoom (room()
-- below), core/admission.ts gcra, core/order-key.ts encodeOrderKey (lib.lua orderKey); the
-- model-based test holds it to the reference model.
-- Cost: O((k + parkings + timeouts) * log n), plus firing due boosts and moving due delayed tasks into their lanes;
-- candidates are taken a lane run at a time, index writes are one command per index and call.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: boosts, delayed, ready, laneready, lanepark, parkedres, ratewake, leases,
--       deadlines, finished, pendcount, inflight_*, gcra, lim_*, due:* (aging, fair share), fairv, fairf (fair share)
-- ARGV[4] owner, ARGV[5] limit, ARGV[6] leaseMs, ARGV[7] lease id prefix (unique per call)
-- Returns: { now, leaseUntil, claimed, errs, timedOut, nextWakeAt (ms string) or nil, cutShort, boosted }: claimed = one
--          string per claimed task, its values as they were BEFORE the claim: version, attempts,
--          updatedAt, deadlineAt, boostAt, boostPriority, d and its lane member (order key .. id: priority, runAt,
--          createdAt, seq and id), joined by SEP ('' = absent; codec.ts claimedHash); errs = { i,
--          error text, ... } for the claimed tasks that have an error (the caller applies status
--          SUBMITTING, leaseOwner, leaseId = prefix .. i, leaseUntil, updatedAt = now, version + 1);
--          timedOut = HGETALL of each task that timed out; cutShort = 1 when a bound on this call's work
--          (MAX_PROMOTE, MAX_TIMEOUTS) ended it with fewer than `limit` claimed while due work is
--          left: the caller calls again at once, in the same claimSubmissions (no claim may stop
--          early while ready lanes remain, DESIGN §3; or MAX_BOOSTS due boosts), else 0;
--          boosted = { priority before, HGETALL, ... } of the tasks a boost raised (applyDueBoosts)
local owner, limit, leaseMs, lbase = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local MAX_PROMOTE, MAX_TIMEOUTS, MAX_BOOSTS = 5000, 1000, 1000

-- due deadline boosts fire before anything else looks at the order; more than one call fires:
-- claim nothing yet (the order must have all of them applied), call again now
local boosted, boostBacklog = applyDueBoosts(MAX_BOOSTS)

-- The first delayed task and the first rate wake-up, read once: when neither is due and this
-- call adds no rate wake-up, they are also the nextWakeAt of the reply (no second read).
local firstDelayed = redis.call('ZRANGE', K.delayed, '0', '0', 'WITHSCORES')[2]
local firstRate = redis.call('ZRANGE', K.ratewake, '0', '0', 'WITHSCORES')[2]
local delayedMoved, rateMoved = false, false

-- due delayed tasks join their lanes
local due = {}
if firstDelayed and tonumber(firstDelayed) <= NOW then
  delayedMoved = true
  due = redis.call('ZRANGEBYSCORE', K.delayed, '-inf', NOWS, 'LIMIT', '0', MAX_PROMOTE)
  for _, id in ipairs(due) do
    redis.call('ZREM', K.delayed, id)
    enqueueStored(id)
  end
end
-- more due tasks than one call moves: claim nothing yet (order must stay exact), call again now
local backlog = boostBacklog or (#due == MAX_PROMOTE and redis.call('ZCOUNT', K.delayed, '-inf', NOWS) > 0)
local cutShort = backlog

-- providers whose next rate token is due release their parked lanes
if firstRate and tonumber(firstRate) <= NOW then
  rateMoved = true
  for _, p in ipairs(redis.call('ZRANGEBYSCORE', K.ratewake, '-inf', NOWS)) do
    redis.call('ZREM', K.ratewake, p)
    unpark('r' .. SEP .. p)
  end
end

-- Limits and counters read once per call and kept up to date here (this script is the only
-- writer while it runs).
local provCache, limCache, useCache = {}, {}, {}
local function providerLimits(prov)
  local pl = provCache[prov]
  if not pl then
    pl = redis.call('HMGET', dk('provider', prov), 'paused', 'qps', 'burst', 'accountConcurrency')
    -- the GCRA state is read only by a provider with a rate (tat: every use is under qps)
    pl.tat = tonumber(pl[2]) and tonumber(redis.call('HGET', K.gcra, prov)) or 0
    provCache[prov] = pl
  end
  return pl
end
-- HGET key field as a number (`missing` when absent), read once per script call through `cache`.
local function cachedNumber(cache, key, field, missing)
  local c = subtable(cache, key)
  local v = c[field]
  if v == nil then
    v = tonumber(redis.call('HGET', key, field)) or missing
    c[field] = v
  end
  return v
end
local function limitOf(key, field) return cachedNumber(limCache, key, field, false) end
local function inUse(key, field) return cachedNumber(useCache, key, field, 0) end
-- Counts `n` more slots in use (HINCRBY) and keeps the cached count current.
local function addInUse(key, field, n)
  subtable(useCache, key)[field] = redis.call('HINCRBY', key, field, n)
end

-- min(n, lim - in use) for one counted resource (account, tenant, concurrency key) whose in-use
-- counts live in hash `inflight` under `member`; no limit: n. 0 comes with the resource to park on.
local function slotRoom(n, lim, inflight, kind, member)
  if not lim then return n end
  local r = lim - inUse(inflight, member)
  if r <= 0 then return 0, kind .. SEP .. member end
  if r < n then return r end
  return n
end

-- How many of `want` candidates of a lane (admission keys prov, acct, ten, ck) may start now, the
-- claims made so far counted (core/lane-admission.ts laneRefusalReason, then consumeRoom per
-- claim, batched over a lane run). 0 comes with the resource to park on (and for a rate refusal the
-- time the next token is due).
local function room(want, prov, acct, ten, ck)
  local pl = providerLimits(prov)
  if pl[1] == '1' then return 0, 'p' .. SEP .. prov end
  local n = want
  local qps = tonumber(pl[2])
  if qps then
    -- GCRA, one token per claim (core/admission.ts gcra, applied claim by claim)
    local burst = tonumber(pl[3]) or 1
    local interval = 1000 / qps
    local t, k = pl.tat, 0
    while k < n do
      local nxt = math.max(t, NOW) + interval
      if nxt - NOW > burst * interval + 1e-9 then
        if k == 0 then return 0, 'r' .. SEP .. prov, nxt - burst * interval end
        break
      end
      t, k = nxt, k + 1
    end
    n = k
  end
  local refused
  if acct then
    local ak = prov .. SEP .. acct
    n, refused = slotRoom(n, limitOf(K.lim_a, ak) or tonumber(pl[4]), K.inflight_a, 'a', ak)
    if n == 0 then return 0, refused end
  end
  if ten then
    n, refused = slotRoom(n, limitOf(K.lim_t, ten) or limitOf(K.lim_meta, 'defaultTenantQuota'), K.inflight_t, 't', ten)
    if n == 0 then return 0, refused end
  end
  if ck then
    n, refused = slotRoom(n, limitOf(K.lim_c, ck) or 1, K.inflight_c, 'c', ck)
    if n == 0 then return 0, refused end
  end
  return n
end

-- Index writes of the claimed tasks, gathered and done with one command per index at the end.
local stRem, leaseAdd, dueRem, pendDec, provInc = {}, {}, {}, {}, {}, {}
local claimed, errs, timedOut = {}, {}, {}
-- fair share: the largest tag claimed per level (priority, decimal) and the F fields of the claimed tasks' tenants
local fairMax, fairFields = {}, {}
local leaseUntil = fmt(NOW + leaseMs)
local nowS = NOWS
local laneKeys = {}
local stop = false

-- Candidates are taken lane by lane: all members of the best ready lane that come before the
-- head of the second-best one are the next candidates in DESIGN §2 order, and they share every
-- admission key, so one admission check says how many of them may start.
while not stop and not backlog and #claimed < limit do
  local top = redis.call('ZRANGE', K.ready, '0', '1')
  local m = top[1]
  if not m then break end
  local lane = string.sub(m, KEYW + 1)
  local lk = dk('lane', lane)
  local want = limit - #claimed
  -- the candidates, and (alone ready) one member more: the lane's next head once they are
  -- taken, so that moving the lane needs no read; `rest` = the lane has no member after them
  local members, after, rest
  if top[2] then
    members = redis.call('ZRANGE', lk, '-', '(' .. string.sub(top[2], 1, KEYW), 'BYLEX', 'LIMIT', '0', want)
  else
    members = redis.call('ZRANGE', lk, '0', want)
    after = members[want + 1]
    members[want + 1] = nil
    rest = not after
  end
  local ak = laneKeys[lane]
  if not ak then
    ak = redis.call('HMGET', dk('task', string.sub(members[1], KEYW + 1)), 'providerKey', 'accountId', 'tenantId', 'concurrencyKey')
    laneKeys[lane] = ak
  end
  local prov, acct, ten, ck = ak[1], ak[2], ak[3], ak[4]
  local n, res, retryAt = room(#members, prov, acct, ten, ck)
  local taken, used, expired = 0, 0, {}
  if n == 0 then
    -- refused: the head still times out when due to, else the lane parks
    local id = string.sub(members[1], KEYW + 1)
    local deadline = tonumber(redis.call('HGET', dk('task', id), 'deadlineAt'))
    if deadline and deadline <= NOW then
      if #timedOut >= MAX_TIMEOUTS then
        cutShort = true
        break
      end
      taken = 1
      expired[1] = id
    else
      park(lane, res)
      if retryAt then
        redis.call('ZADD', K.ratewake, fmt(math.ceil(retryAt)), prov)
        rateMoved = true
      end
    end
  else
    local pl = providerLimits(prov)
    local qps = tonumber(pl[2])
    local interval = qps and 1000 / qps
    for i = 1, #members do
      if used >= n then break end
      local mem = members[i]
      local id = string.sub(mem, KEYW + 1)
      local tk = dk('task', id)
      -- d, version, deadlineAt; a task never changed since create (version 1: every change bumps
      -- it) has no attempts, error or updatedAt, so only another one reads them
      local vals = redis.call('HMGET', tk, 'd', 'version', 'deadlineAt', '_h', 'boostAt', 'boostPriority')
      local deadline, version = tonumber(vals[3]), vals[2]
      local more = version ~= '1' and redis.call('HMGET', tk, 'attempts', 'error', 'updatedAt')
      local ph = string.sub(mem, PRI_AT, PRI_AT + 7) -- the order key's priority part
      if deadline and deadline <= NOW then
        if #timedOut + #expired >= MAX_TIMEOUTS then
          stop = true
          cutShort = true
          break
        end
        expired[#expired + 1] = id
      else
        used = used + 1
        if interval then pl.tat = math.max(pl.tat, NOW) + interval end
        -- one reply element per task (each element of a script's reply costs as much as a field
        -- of HMGET): the values that cannot hold SEP, `d` (JSON escapes it) and the lane member
        -- last; an error text goes to errs
        if more then
          claimed[#claimed + 1] = version .. SEP .. (more[1] or '') .. SEP .. (more[3] or '') .. SEP .. (vals[3] or '') ..
            SEP .. (vals[5] or '') .. SEP .. (vals[6] or '') .. SEP .. vals[1] .. SEP .. mem
          if more[2] then
            errs[#errs + 1] = #claimed
            errs[#errs + 1] = more[2]
          end
        else
          claimed[#claimed + 1] = version .. SEP .. SEP .. SEP .. (vals[3] or '') .. SEP .. (vals[5] or '') .. SEP ..
            (vals[6] or '') .. SEP .. vals[1] .. SEP .. mem
        end
        if HIST > 0 then -- the history entry rides in the same write (lib.lua histAppend)
          local v = fmt(tonumber(version) + 1)
          redis.call('HSET', tk, 'status', SUBMITTING, 'leaseOwner', owner, 'leaseId', lbase .. #claimed,
            'leaseUntil', leaseUntil, 'updatedAt', nowS, 'version', v, '_h', histAppend(vals[4], PENDING, SUBMITTING, v, false))
        else
          redis.call('HSET', tk, 'status', SUBMITTING, 'leaseOwner', owner, 'leaseId', lbase .. #claimed,
            'leaseUntil', leaseUntil, 'updatedAt', nowS, 'version', fmt(tonumber(version) + 1))
        end
        stRem[#stRem + 1] = id
        leaseAdd[#leaseAdd + 1] = leaseUntil
        leaseAdd[#leaseAdd + 1] = id
        if DUESETS then -- keys.ts `due`
          local d = subtable(dueRem, ph)
          d[#d + 1] = id
        end
        pendDec[ph] = (pendDec[ph] or 0) + 1
        if FAIR then -- the tag follows the priority in the order key
          local p = fmt(2147483647 - tonumber(ph, 16))
          local tag = fairOfHex(string.sub(mem, PRI_AT + 8, PRI_AT + 23))
          if not fairMax[p] or tag > fairMax[p] then fairMax[p] = tag end
          fairFields[fairField(p, ten)] = p
        end
      end
      taken = i
    end
    if used > 0 then
      if interval then redis.call('HSET', K.gcra, prov, string.format('%.17g', pl.tat)) end
      provInc[prov] = (provInc[prov] or 0) + used
      if acct then addInUse(K.inflight_a, prov .. SEP .. acct, used) end
      if ten then addInUse(K.inflight_t, ten, used) end
      if ck then addInUse(K.inflight_c, ck, used) end
    end
  end
  if taken > 0 then
    -- the lane moves to its next head, or leaves ready
    redis.call('ZREMRANGEBYRANK', lk, '0', taken - 1)
    redis.call('ZREM', K.ready, m)
    local head = members[taken + 1] or after
    if not head and not rest then head = redis.call('ZRANGE', lk, '0', '0')[1] end
    if head then
      local hm = string.sub(head, 1, KEYW) .. lane
      redis.call('ZADD', K.ready, '0', hm)
      redis.call('HSET', K.laneready, lane, hm)
    else
      redis.call('HDEL', K.laneready, lane)
    end
    -- out of its lane already: finalize only updates the other indexes
    for _, id in ipairs(expired) do
      finalize(id, 'TIMED_OUT')
      timedOut[#timedOut + 1] = taskOf(id)
    end
  end
end

local function chunked(cmd, key, list, step)
  for i = 1, #list, step do
    redis.call(cmd, key, unpack(list, i, math.min(i + step - 1, #list)))
  end
end
if #stRem > 0 then
  chunked('ZREM', dk('status', PENDING), stRem, 1000)
  chunked('ZADD', K.leases, leaseAdd, 2000)
  local function pri(ph) return fmt(2147483647 - tonumber(ph, 16)) end
  for ph, ids in pairs(dueRem) do chunked('ZREM', dk('due', pri(ph)), ids, 1000) end
  for ph, c in pairs(pendDec) do hincr(K.pendcount, pri(ph), -c) end
  for prov, c in pairs(provInc) do redis.call('HINCRBY', K.inflight_p, prov, c) end
  if FAIR then fairClaimed(fairMax, fairFields) end
end

-- tell idle workers when due work is left that this call moved in but did not take
WOKE = #due > 0 and redis.call('EXISTS', K.ready) == 1
local nextWake
if backlog then
  nextWake = NOW
else
  local d, r = firstDelayed, firstRate
  if delayedMoved then d = redis.call('ZRANGE', K.delayed, '0', '0', 'WITHSCORES')[2] end
  if rateMoved then r = redis.call('ZRANGE', K.ratewake, '0', '0', 'WITHSCORES')[2] end
  if d then nextWake = tonumber(d) end
  if r and (not nextWake or tonumber(r) < nextWake) then nextWake = tonumber(r) end
end
wake()
return { nowS, leaseUntil, claimed, errs, timedOut, nextWake and fmt(nextWake) or false, cutShort and 1 or 0, boosted }
