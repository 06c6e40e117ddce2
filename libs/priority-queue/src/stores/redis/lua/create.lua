-- create: creates tasks in one atomic step; an input whose idempotency key exists (in the store
-- or earlier in this batch) returns the existing task instead.
-- KEYS: fixed keys (used: seq, idem, pendcount, deadlines, delayed, ready, laneready, lanepark)
-- ARGV[4]  n, the number of tasks
-- ARGV[5 + 14*i ..] per task i: id, idempotencyKey (opt), type, payload (JSON), priority,
--          providerKey, accountId (opt), tenantId (opt), concurrencyKey (opt), delayMs,
--          timeoutMs (opt), maxAttempts, idempotent ('1' | '0'), lane id
-- Returns: { now, r_1 .. r_n } with r_i = { 1, seq } for a created task (the caller builds it
--          from its input) or { 0, HGETALL of the existing task }.
--          Error 'PQ_DUPLICATE <id>' (nothing written) when a task to create has the id of an
--          existing task or of another task of the batch.
local n = tonumber(ARGV[4])

-- all or none: find conflicts before writing anything
local keysSeen, idsSeen = {}, {}
for i = 0, n - 1 do
  local a = 5 + i * 14
  local id, ik = ARGV[a], opt(ARGV[a + 1])
  local existing = ik and (keysSeen[ik] or redis.call('HGET', K.idem, ik))
  if not (existing and (keysSeen[ik] or redis.call('EXISTS', dk('task', existing)) == 1)) then
    if idsSeen[id] or redis.call('EXISTS', dk('task', id)) == 1 then fail('PQ_DUPLICATE ' .. id) end
    idsSeen[id] = true
    if ik then keysSeen[ik] = true end
  end
end

local out = { fmt(NOW) }
for i = 0, n - 1 do
  local a = 5 + i * 14
  local id, ik = ARGV[a], opt(ARGV[a + 1])
  local existing = ik and redis.call('HGET', K.idem, ik)
  if existing and redis.call('EXISTS', dk('task', existing)) == 1 then
    out[#out + 1] = { 0, taskOf(existing) }
  else
    local seq = redis.call('INCR', K.seq)
    local pri = tonumber(ARGV[a + 4])
    local runAt = NOW + tonumber(ARGV[a + 9])
    local lane = ARGV[a + 13]
    local tk = dk('task', id)
    local h = { 'id', id, 'type', ARGV[a + 2], 'payload', ARGV[a + 3], 'priority', fmt(pri),
      'providerKey', ARGV[a + 5], 'runAt', fmt(runAt), 'createdAt', fmt(NOW), 'seq', fmt(seq),
      'status', PENDING, 'version', '1', 'maxAttempts', ARGV[a + 11], 'idempotent', ARGV[a + 12], '_l', lane }
    -- attempts, pollErrors, cancelRequested (0) and updatedAt (= createdAt) are left out until set
    local function put(field, v)
      if v then
        h[#h + 1] = field
        h[#h + 1] = v
      end
    end
    put('idempotencyKey', ik)
    put('accountId', opt(ARGV[a + 6]))
    put('tenantId', opt(ARGV[a + 7]))
    put('concurrencyKey', opt(ARGV[a + 8]))
    local timeout = opt(ARGV[a + 10])
    local deadline = timeout and NOW + tonumber(timeout)
    if deadline then put('deadlineAt', fmt(deadline)) end
    local due = runAt <= NOW
    local k = due and orderKey(pri, runAt, NOW, seq)
    put('_k', k)
    redis.call('HSET', tk, unpack(h))
    if deadline then redis.call('ZADD', K.deadlines, fmt(deadline), id) end
    if ik then redis.call('HSET', K.idem, ik, id) end
    moveStatus(id, false, PENDING, fmt(seq), fmt(pri))
    if due then
      laneAdd(id, pri, runAt, NOW, seq, lane, k)
      WOKE = true
    else
      redis.call('ZADD', K.delayed, fmt(runAt), id)
      WOKE = true -- idle workers learn the new nextWakeAt at once
    end
    out[#out + 1] = { 1, seq }
  end
end
wake()
return out
