-- create: creates tasks in one atomic step; an input whose idempotency key exists (in the store
-- or earlier in this batch) returns the existing task instead.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: seq, idem, pendcount, deadlines, delayed, ready, laneready, lanepark
-- ARGV[4]  n, the number of tasks
-- ARGV[5 + 13*i ..] per task i: id, idempotencyKey (opt), head of `d` (codec.ts dHead: JSON array
--          text up to `idempotent`, no closing bracket), priority, providerKey, accountId (opt),
--          tenantId (opt), concurrencyKey (opt), delayMs, timeoutMs (opt), maxAttempts,
--          idempotent ('1' | '0'), lane id
-- Returns: { now, r_1 .. r_n } with r_i = { 1, seq } for a created task (the caller builds it
--          from its input) or { 0, HGETALL of the existing task }.
--          Error 'PQ_DUPLICATE <id>' (nothing written) when a task to create has the id of an
--          existing task or of another task of the batch.
local n = tonumber(ARGV[4])

-- all or none: find conflicts before writing anything
local keysSeen, idsSeen = {}, {}
local toCreate = 0
for i = 0, n - 1 do
  local a = 5 + i * 13
  local id, ik = ARGV[a], opt(ARGV[a + 1])
  local existing = ik and (keysSeen[ik] or redis.call('HGET', K.idem, ik))
  if not (existing and (keysSeen[ik] or redis.call('EXISTS', dk('task', existing)) == 1)) then
    if idsSeen[id] or redis.call('EXISTS', dk('task', id)) == 1 then fail('PQ_DUPLICATE ' .. id) end
    idsSeen[id] = true
    if ik then keysSeen[ik] = true end
    toCreate = toCreate + 1
  end
end

-- index writes are gathered and done with one command per index (and per lane / priority)
local byStatus, delayed, lanes, laneOrder, due, pend = {}, {}, {}, {}, {}, {}
local function push(list, score, member)
  list[#list + 1] = score
  list[#list + 1] = member
end
local function zaddMany(key, list)
  for i = 1, #list, 1000 do
    redis.call('ZADD', key, unpack(list, i, math.min(i + 999, #list)))
  end
end

local seq = redis.call('INCRBY', K.seq, toCreate) - toCreate
local nowS = fmt(NOW)
local out = { nowS }
for i = 0, n - 1 do
  local a = 5 + i * 13
  local id, ik = ARGV[a], opt(ARGV[a + 1])
  local existing = ik and redis.call('HGET', K.idem, ik)
  if existing and redis.call('EXISTS', dk('task', existing)) == 1 then
    out[#out + 1] = { 0, taskOf(existing) }
  else
    seq = seq + 1
    local pri = tonumber(ARGV[a + 3])
    local runAt = NOW + tonumber(ARGV[a + 8])
    local lane = ARGV[a + 12]
    local timeout = opt(ARGV[a + 9])
    local deadline = timeout and NOW + tonumber(timeout)
    local d = ARGV[a + 2] .. ',' .. nowS .. ',' .. fmt(seq) .. ',' .. (deadline and fmt(deadline) or 'null') .. ']'
    local h = { 'd', d, 'priority', fmt(pri),
      'providerKey', ARGV[a + 4], 'runAt', fmt(runAt), 'createdAt', nowS, 'seq', fmt(seq),
      'status', PENDING, 'version', '1', 'maxAttempts', ARGV[a + 10], 'idempotent', ARGV[a + 11], '_l', lane }
    -- attempts, pollErrors, cancelRequested (0) and updatedAt (= createdAt) are left out until set
    local function put(field, v)
      if v then
        h[#h + 1] = field
        h[#h + 1] = v
      end
    end
    put('idempotencyKey', ik)
    put('accountId', opt(ARGV[a + 5]))
    put('tenantId', opt(ARGV[a + 6]))
    put('concurrencyKey', opt(ARGV[a + 7]))
    if deadline then put('deadlineAt', fmt(deadline)) end
    local isDue = runAt <= NOW
    local k = isDue and orderKey(pri, runAt, NOW, seq)
    put('_k', k)
    redis.call('HSET', dk('task', id), unpack(h))
    if deadline then redis.call('ZADD', K.deadlines, fmt(deadline), id) end
    if ik then redis.call('HSET', K.idem, ik, id) end
    push(byStatus, fmt(seq), id)
    local p = fmt(pri)
    pend[p] = (pend[p] or 0) + 1
    if isDue then
      local l = lanes[lane]
      if not l then
        l = {}
        lanes[lane] = l
        laneOrder[#laneOrder + 1] = lane
      end
      push(l, 0, k .. id)
      due[p] = due[p] or {}
      push(due[p], fmt(runAt), id)
    else
      push(delayed, fmt(runAt), id)
    end
    out[#out + 1] = { 1, seq }
  end
end

if #byStatus > 0 then
  zaddMany(dk('status', PENDING), byStatus)
  for p, c in pairs(pend) do redis.call('HINCRBY', K.pendcount, p, c) end
  for p, list in pairs(due) do zaddMany(dk('due', p), list) end
  zaddMany(K.delayed, delayed)
  for _, lane in ipairs(laneOrder) do
    zaddMany(dk('lane', lane), lanes[lane])
    refreshReady(lane)
  end
  WOKE = true -- idle workers claim the new work, or learn the new nextWakeAt
end
wake()
return out
