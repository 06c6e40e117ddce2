-- create: creates tasks in one atomic step; an input whose idempotency key exists (in the store
-- or earlier in this batch) returns the existing task instead.
-- KEYS: fixed keys (used: seq, idem, pendcount, deadlines, delayed, ready, laneready, lanepark)
-- ARGV[4]  n, the number of tasks
-- ARGV[5 + 14*i ..] per task i: id, idempotencyKey (opt), type, payload (JSON), priority,
--          providerKey, accountId (opt), tenantId (opt), concurrencyKey (opt), delayMs,
--          timeoutMs (opt), maxAttempts, idempotent ('1' | '0'), lane id
-- Returns: { now, r_1 .. r_n } with r_i = { 1, seq } for a created task (the caller builds it
--          from its input) or { 0, HGETALL of the existing task }.
local n = tonumber(ARGV[4])
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
    redis.call('HSET', tk, 'id', id, 'type', ARGV[a + 2], 'payload', ARGV[a + 3], 'priority', fmt(pri),
      'providerKey', ARGV[a + 5], 'runAt', fmt(runAt), 'createdAt', fmt(NOW), 'seq', fmt(seq),
      'status', PENDING, 'version', '1', 'attempts', '0', 'maxAttempts', ARGV[a + 11],
      'idempotent', ARGV[a + 12], 'pollErrors', '0', 'cancelRequested', '0', 'updatedAt', fmt(NOW), '_l', lane)
    local o = { 'idempotencyKey', ik, 'accountId', opt(ARGV[a + 6]), 'tenantId', opt(ARGV[a + 7]),
      'concurrencyKey', opt(ARGV[a + 8]) }
    for j = 1, #o, 2 do
      if o[j + 1] then redis.call('HSET', tk, o[j], o[j + 1]) end
    end
    local timeout = opt(ARGV[a + 10])
    if timeout then
      local deadline = NOW + tonumber(timeout)
      redis.call('HSET', tk, 'deadlineAt', fmt(deadline))
      redis.call('ZADD', K.deadlines, fmt(deadline), id)
    end
    if ik then redis.call('HSET', K.idem, ik, id) end
    moveStatus(id, false, PENDING, fmt(seq), fmt(pri))
    enqueue(id, pri, runAt, NOW, seq, lane)
    out[#out + 1] = { 1, seq }
  end
end
wake()
return out
