-- create: creates tasks in one atomic step; an input whose idempotency key exists (in the store
-- or earlier in this batch) with the same type, tenant and payload returns the existing task
-- instead; with another one the whole batch fails (core/idempotency.ts).
-- With fair share (FAIR) each created task is tagged at its level in input order (lib.lua
-- fairTagger, core/fairness.ts): the tag is its hash field `fairTag` and part of its order key.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: seq, idem, pendcount, deadlines, boosts, delayed, ready, laneready,
--       lanepark, due:* (aging, fair share), fairv, fairf, lim_w (fair share)
-- ARGV[4]  n, the number of tasks
-- ARGV[5 + 13*i ..] per task i: id, idempotencyKey (opt), `d` (codec.ts dJson: the immutable
--          properties as a JSON array, stored as given; maxAttempts and idempotent are read from
--          it, no field of their own), priority, providerKey, accountId (opt), tenantId (opt),
--          concurrencyKey (opt), delayMs, timeoutMs (opt), lane id, idempotency scope ('' without a key: codec.ts
--          idemScope, `type \31 tenant \31 payload fingerprint`, kept in the task's field `_i`),
--          deadline boost ('' or '+W:P', codec.ts boostArg; only with a timeout: boostAt =
--          deadlineAt - W and boostPriority = P are kept, the boost waits in K.boosts)
-- Returns: { now, first seq, tags, { i, HGETALL }, ... }: the created tasks take the sequence numbers
--          first, first + 1, ... in input order (the caller builds them from its input) and the
--          fair tags in `tags` (decimal, in the same order; empty without fair share); an input
--          i (1-based) whose idempotency key exists gets the HGETALL of the existing task instead.
--          Errors (nothing written): 'PQ_DUPLICATE <id>' when a task to create has the id of an
--          existing task or of another task of the batch; 'PQ_IDEMCONFLICT <i> <fields> <id as
--          JSON>' when input i (0-based) reuses a key held by task <id> with another scope
--          (<fields>: the differing parts, comma-separated: type, tenantId, payload); 'PQ_FAIRTAG'
--          when a tag would pass the largest one kept (codec.ts MAX_REDIS_FAIR_TAG).
local W = 13

-- The hash of the task of input `a` (the ARGV index of its id) as created, sequence number seqS,
-- fair tag `tag` (16 hex digits, or nil), without its order key: { field, value, ... }, then its
-- runAt and runAt's decimal. Writes its idempotency key `ik` (or false) and its deadline; its
-- deadline boost's (boostAt, member) pair goes into `boosts`.
local function taskHash(a, ik, seq, seqS, nowS, tag, boosts)
  local id = ARGV[a]
  local runAt, runS = NOW, nowS
  if ARGV[a + 8] ~= '0' then -- delayMs, as the client formats it (tonumber costs ~2k instructions)
    runAt = NOW + tonumber(ARGV[a + 8])
    runS = fmt(runAt)
  end
  local h = { 'd', ARGV[a + 2], 'priority', ARGV[a + 3], -- the decimal priority, as the client formats it
    'providerKey', ARGV[a + 4], 'runAt', runS, 'createdAt', nowS, 'seq', seqS,
    'status', PENDING, 'version', '1', '_l', ARGV[a + 10] }
  if tag then
    h[#h + 1] = 'fairTag'
    h[#h + 1] = tag
  end
  -- attempts, pollErrors, cancelRequested (0) and updatedAt (= createdAt) are left out until set
  if ik then
    h[#h + 1] = 'idempotencyKey'
    h[#h + 1] = ik
    h[#h + 1] = '_i'
    h[#h + 1] = ARGV[a + 11]
    redis.call('HSET', K.idem, ik, id)
  end
  local v = opt(ARGV[a + 5])
  if v then
    h[#h + 1] = 'accountId'
    h[#h + 1] = v
  end
  v = opt(ARGV[a + 6])
  if v then
    h[#h + 1] = 'tenantId'
    h[#h + 1] = v
  end
  v = opt(ARGV[a + 7])
  if v then
    h[#h + 1] = 'concurrencyKey'
    h[#h + 1] = v
  end
  local timeout = opt(ARGV[a + 9])
  if timeout then
    local deadline = NOW + tonumber(timeout)
    local deadS = fmt(deadline)
    h[#h + 1] = 'deadlineAt'
    h[#h + 1] = deadS
    redis.call('ZADD', K.deadlines, deadS, id)
    local b = opt(ARGV[a + 12])
    if b then -- core/boost.ts boostAtOf
      local w, bp = string.match(b, '^(%d+):(-?%d+)$')
      local at = fmt(deadline - tonumber(w))
      h[#h + 1] = 'boostAt'
      h[#h + 1] = at
      h[#h + 1] = 'boostPriority'
      h[#h + 1] = bp
      boosts[#boosts + 1] = at
      boosts[#boosts + 1] = boostMember(seq, id)
    end
  end
  return h, runAt, runS
end

-- After keys were added to `lane`, `min` the smallest: only a new head moves the lane's ready
-- entry. A lane with one (so not parked: lib.lua park drops it) whose head's key sorts before
-- `min` keeps it (one HGET, where refreshReady reads the park, the head and the entry), and then
-- no worker is woken: the change that made the lane ready announced it, and a worker that found
-- nothing since (a claim answered short) found every ready lane refused or empty, so no idle
-- worker is left to tell (a lane's tasks share their admission keys: the new ones are
-- admissible exactly when its head is).
local function laneAdded(lane, min)
  local cur = redis.call('HGET', K.laneready, lane)
  if not cur or min < string.sub(cur, 1, KEYW) then
    refreshReady(lane)
    WOKE = WOKE or 's' -- idle workers claim the new head
  end
end

-- One task without an idempotency key (a single submit): written at once, without the batch's
-- bookkeeping below (a dozen tables and three closures every call builds before its first line).
if ARGV[4] == '1' and ARGV[6] == '' then
  local id, p = ARGV[5], ARGV[8]
  local tk = dk('task', id)
  if redis.call('EXISTS', tk) == 1 then fail('PQ_DUPLICATE ' .. id) end
  local tag, tags = nil, {}
  if FAIR then -- still nothing written (an overflow fails the call)
    local tagger = fairTagger()
    local t = tagger.tag(opt(ARGV[11]), tonumber(p))
    tagger.save()
    tag = fairHex(t)
    tags[1] = fmt(t)
  end
  local seq = redis.call('INCR', K.seq)
  local seqS, nowS, boosts = fmt(seq), NOWS, {}
  local h, runAt, runS = taskHash(5, false, seq, seqS, nowS, tag, boosts)
  redis.call('ZADD', dk('status', PENDING), seqS, id)
  redis.call('HINCRBY', K.pendcount, p, '1')
  if runAt <= NOW then
    local k = orderKey(tonumber(p), runAt, NOW, seq, tag)
    h[#h + 1] = '_k'
    h[#h + 1] = k
    redis.call('ZADD', dk('lane', ARGV[15]), '0', k .. id)
    if DUESETS then redis.call('ZADD', dk('due', p), runS, id) end -- keys.ts `due`
    laneAdded(ARGV[15], k)
  else
    redis.call('ZADD', K.delayed, runS, id)
    WOKE = WOKE or 's' -- idle workers learn the new nextWakeAt
  end
  if #boosts > 0 then redis.call('ZADD', K.boosts, unpack(boosts)) end
  redis.call('HSET', tk, unpack(h))
  wake()
  return { nowS, seq, tags }
end

local n = tonumber(ARGV[4])

-- idempotency scopes: scopeDiff(held, scope) = the parts in which a held scope and an input's
-- differ ('*': a payload not known, see heldScope), or false; heldScope(id) = the scope of an
-- existing task, or false when it does not exist (a task written before scopes were kept has no
-- `_i`: its type and tenant come from `d`, its payload cannot be compared). Built by idemScopes()
-- on the first input with a key: their closures would cost every call.
local scopeDiff, heldScope
local function idemScopes()
  if scopeDiff then return end
  local SCOPE_FIELDS = { 'type', 'tenantId', 'payload' }
  local function scopeParts(s)
    local e1 = string.find(s, SEP, 1, true)
    local e2 = string.find(s, SEP, e1 + 1, true)
    return { string.sub(s, 1, e1 - 1), string.sub(s, e1 + 1, e2 - 1), string.sub(s, e2 + 1) }
  end
  scopeDiff = function(held, scope)
    if held == scope then return false end
    local a, b, diff = scopeParts(held), scopeParts(scope), {}
    for j = 1, 3 do
      if a[j] ~= b[j] and a[j] ~= '*' then diff[#diff + 1] = SCOPE_FIELDS[j] end
    end
    return #diff > 0 and table.concat(diff, ',')
  end
  heldScope = function(id)
    local tk = dk('task', id)
    local s = redis.call('HGET', tk, '_i')
    if s then return s end
    local d = redis.call('HGET', tk, 'd')
    if not d then return false end
    local t = cjson.decode(d)
    local tenant = t[7] == cjson.null and '' or ('+' .. t[7])
    return t[2] .. SEP .. tenant .. SEP .. '*'
  end
end

-- all or none: find conflicts before writing anything
local batchScope, batchId, idsSeen = {}, {}, {}
local skip = {} -- input indexes whose idempotency key names a live task (maybe one of this batch)
local toCheck = {}
local toCreate = 0
for i = 0, n - 1 do
  local a = 5 + i * W
  local id, ik = ARGV[a], opt(ARGV[a + 1])
  local held, holder = false, nil
  if ik then
    idemScopes()
    held, holder = batchScope[ik], batchId[ik]
    if not held then
      holder = redis.call('HGET', K.idem, ik)
      held = holder and heldScope(holder)
    end
  end
  if held then
    local diff = scopeDiff(held, ARGV[a + 11])
    if diff then fail('PQ_IDEMCONFLICT ' .. i .. ' ' .. diff .. ' ' .. cjson.encode(holder)) end
    skip[i] = true
  else
    if idsSeen[id] then fail('PQ_DUPLICATE ' .. id) end
    idsSeen[id] = true
    if ik then
      batchScope[ik] = ARGV[a + 11]
      batchId[ik] = id
    end
    toCheck[#toCheck + 1] = dk('task', id)
    toCreate = toCreate + 1
  end
end
-- one EXISTS per 1000 new ids; only a hit looks for the culprit
for c = 1, #toCheck, 1000 do
  local last = math.min(c + 999, #toCheck)
  if redis.call('EXISTS', unpack(toCheck, c, last)) > 0 then
    for j = c, last do
      if redis.call('EXISTS', toCheck[j]) == 1 then fail('PQ_DUPLICATE ' .. string.sub(toCheck[j], #dk('task', '') + 1)) end
    end
  end
end

-- fair tags, in input order; still nothing written (an overflow fails the whole batch)
local tags, tagList, tagger = {}, {}, nil
if FAIR then
  tagger = fairTagger()
  for i = 0, n - 1 do
    if not skip[i] then
      local a = 5 + i * W
      local tag = tagger.tag(opt(ARGV[a + 6]), tonumber(ARGV[a + 3]))
      tags[i] = fairHex(tag)
      tagList[#tagList + 1] = fmt(tag)
    end
  end
  tagger.save()
end

-- index writes are gathered and done with one command per index (and per lane / priority)
local byStatus, delayed, lanes, laneOrder, due, pend, boosts = {}, {}, {}, {}, {}, {}, {}
local laneMin = {} -- lane -> the smallest order key this call adds to it
local function zaddMany(key, list)
  for i = 1, #list, 1000 do
    redis.call('ZADD', key, unpack(list, i, math.min(i + 999, #list)))
  end
end

local first = redis.call('INCRBY', K.seq, toCreate) - toCreate + 1
local seq = first - 1
local nowS = NOWS
local out = { nowS, first, tagList }
-- order key parts shared by the batch (core/order-key.ts layout, see orderKey in lib.lua)
local priHex, timeHex = {}, {}
local function hexTime(t)
  local h = timeHex[t]
  if not h then
    h = hex14(t + TWO52)
    timeHex[t] = h
  end
  return h
end
local nowHex = hexTime(NOW)
for i = 0, n - 1 do
  local a = 5 + i * W
  if skip[i] then
    out[#out + 1] = { i + 1, taskOf(redis.call('HGET', K.idem, opt(ARGV[a + 1]))) }
  else
    local id, ik = ARGV[a], opt(ARGV[a + 1])
    seq = seq + 1
    local seqS = fmt(seq)
    local p = ARGV[a + 3]
    local pri = tonumber(p)
    local tag = tags[i]
    local h, runAt, runS = taskHash(a, ik, seq, seqS, nowS, tag, boosts)
    local lane = ARGV[a + 10]
    byStatus[#byStatus + 1] = seqS
    byStatus[#byStatus + 1] = id
    pend[p] = (pend[p] or 0) + 1
    if runAt <= NOW then
      local ph = priHex[p]
      if not ph then
        ph = string.format('%08x', 2147483647 - pri)
        priHex[p] = ph
      end
      local k = hexTime(runAt) .. nowHex .. hex14(seq)
      if tag then k = tag .. k end
      k = ph .. k
      if AGING > 0 then k = agedHex(runAt, pri) .. k end
      h[#h + 1] = '_k'
      h[#h + 1] = k
      local l = lanes[lane]
      if not l then
        l = {}
        lanes[lane] = l
        laneOrder[#laneOrder + 1] = lane
        laneMin[lane] = k
      elseif k < laneMin[lane] then
        laneMin[lane] = k
      end
      l[#l + 1] = '0'
      l[#l + 1] = k .. id
      if DUESETS then -- keys.ts `due`
        local dl = subtable(due, p)
        dl[#dl + 1] = runS
        dl[#dl + 1] = id
      end
    else
      delayed[#delayed + 1] = runS
      delayed[#delayed + 1] = id
    end
    redis.call('HSET', dk('task', id), unpack(h))
  end
end

if #byStatus > 0 then
  zaddMany(dk('status', PENDING), byStatus)
  for p, c in pairs(pend) do redis.call('HINCRBY', K.pendcount, p, c) end
  for p, list in pairs(due) do zaddMany(dk('due', p), list) end
  if #delayed > 0 then
    zaddMany(K.delayed, delayed) -- (a K.<name> costs on first use)
    WOKE = WOKE or 's' -- idle workers learn the new nextWakeAt
  end
  if #boosts > 0 then zaddMany(K.boosts, boosts) end
  for _, lane in ipairs(laneOrder) do
    zaddMany(dk('lane', lane), lanes[lane])
    laneAdded(lane, laneMin[lane])
  end
end
wake()
return out
