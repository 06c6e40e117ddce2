-- complete: terminal transitions from held leases, several tasks per call (the store gathers the
-- completes issued in one event-loop turn); each one is checked and applied on its own, as if
-- called alone: status, result / error, finishedAt = now, lease released, nextPollAt cleared,
-- slots freed (publishes a wake when that unparks lanes), attempts + 1 for a failed submit
-- attempt. Fenced.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: leases, polls, deadlines, finished, status:*,
--       inflight_*, lanepark, parkedres, ready, laneready, idem, boosts, kept:*
-- ARGV[4] n, then per task: id, leaseId, version, the terminal status, or '+' .. the status
--         followed by result JSON (opt) and error (opt; '~' = unchanged) (the plain status means
--         a null result and the error unchanged), either form after a '!' when the completion
--         ends a failed submit attempt (attempts + 1), all that after a '#' when a removal rule
--         (core/removal.ts) follows the result and error: its count ('0' = delete the task now,
--         '' = none), ageMs ('' = none) and the task's type ('' = read it here), then seq when the caller holds the task at this
--         version (it rebuilds the written task itself) else '' and nothing more; after a seq:
--         providerKey, flags (1: has a deadline, + 2: has admission keys) and, with keys, its
--         accountId, tenantId, concurrencyKey (opt each), as the caller holds them: the fence
--         (lease id and version) proves them current, so only the fence and status are read
-- A task removed now is deleted in this step (no status / finished entry, idempotency key freed);
-- under a count / age it joins kept:<side>:<type> and the older tasks beyond the rule there are
-- deleted (at most TRIM_MAX per rule and call) after every write of the call.
-- Returns: { now, i, r_i, ... } listing only the tasks whose reply r_i is not 1 (1 = written, the
--          caller rebuilds it): the HGETALL of the written task (a task the caller does not
--          hold) or an error code 'PQ_NOTFOUND' | 'PQ_STALE' | 'PQ_STATE <status>'
local n = tonumber(ARGV[4])
local nowS = NOWS
local out = { nowS }
-- only the tasks whose reply is not 1 are listed (each reply element costs)
local i = 0
local function row(r)
  out[#out + 1] = i
  out[#out + 1] = r
end
local TRIM_MAX = 1000 -- core/removal.ts REMOVAL_TRIM_MAX
local trims = {}
local leaseRem, pollRem, deadRem, finAdd, provDec, stRem, stAdd = {}, {}, {}, {}, {}, {}, {}
local a = 5
for _ = 1, n do
  i = i + 1
  local id, to = ARGV[a], ARGV[a + 3]
  local result, e = false, '~'
  local p = a + 4
  local rm = string.byte(to, 1) == 35 -- '#': a removal rule follows the result and error
  if rm then to = string.sub(to, 2) end
  local attempt = string.byte(to, 1) == 33 -- '!': a failed submit attempt
  if attempt then to = string.sub(to, 2) end
  if string.byte(to, 1) == 43 then -- '+': a result and an error follow
    to, result, e = string.sub(to, 2), opt(ARGV[p]), ARGV[p + 1]
    p = p + 2
  end
  local rmCount, rmAge, rmType = false, false, false
  if rm then
    rmCount, rmAge, rmType = ARGV[p], ARGV[p + 1], ARGV[p + 2]
    p = p + 3
  end
  local gone = rmCount == '0'
  local tk = dk('task', id)
  local seq = ARGV[p]
  local nxt = p + 1
  local f, hcur
  if seq ~= '' then
    -- the caller holds the task: its status is read with the fence, the rest comes from the call
    f = redis.call('HMGET', tk, 'leaseId', 'version', 'status', '_h')
    hcur = f[4]
    local flags = tonumber(ARGV[p + 2])
    local keys = flags >= 2
    if f[2] and f[1] == ARGV[a + 1] and f[2] == ARGV[a + 2] then
      f[4], f[5], f[9] = seq, ARGV[p + 1], flags % 2 == 1
      if keys then f[6], f[7], f[8] = opt(ARGV[p + 3]), opt(ARGV[p + 4]), opt(ARGV[p + 5]) end
    else
      f[3] = f[3] or (f[2] and '') -- missing or stale: reported below
    end
    nxt = keys and p + 6 or p + 3
  else
    f = redis.call('HMGET', tk, 'leaseId', 'version', 'status', 'seq', 'providerKey', 'accountId', 'tenantId',
      'concurrencyKey', 'deadlineAt', '_h')
    hcur = f[10]
  end
  local st = f[3]
  if not st then
    row('PQ_NOTFOUND')
  elseif f[1] ~= ARGV[a + 1] or f[2] ~= ARGV[a + 2] or TERMINAL[st] then
    row('PQ_STALE')
  elseif not INFLIGHT[st] then
    row('PQ_STATE ' .. st)
  else
    local prov, acct, ten, ck = f[5], f[6], f[7], f[8]
    provDec[prov] = (provDec[prov] or 0) + 1
    freeKeySlots(prov, acct, ten, ck)
    leaseRem[#leaseRem + 1] = id
    if st ~= SUBMITTING then pollRem[#pollRem + 1] = id end
    if f[9] then deadRem[#deadRem + 1] = id end
    if st ~= SUBMITTING then -- SUBMITTING has no status set
      local l = subtable(stRem, st)
      l[#l + 1] = id
    end
    if not gone then
      local l = subtable(stAdd, to)
      l[#l + 1] = f[4]
      l[#l + 1] = id
      finAdd[#finAdd + 1] = nowS
      finAdd[#finAdd + 1] = id
    end
    -- the lease fields stay: a terminal task's are ignored (codec.ts decodeHash, lib.lua fenced);
    -- an in-flight task has no result, so only a cleared error is a field to delete; updatedAt
    -- of a terminal task is its finishedAt (decodeHash)
    -- a task deleted now that the caller holds (it rebuilds the reply) is not written first
    if not gone or seq == '' then
      local v = fmt(tonumber(f[2]) + 1)
      if st ~= SUBMITTING then redis.call('HDEL', tk, 'nextPollAt') end
      if attempt then redis.call('HINCRBY', tk, 'attempts', '1') end
      -- the history entry rides in the same write (lib.lua histAppend); its error: the one this
      -- complete writes, else the task's
      local hv = false
      if HIST > 0 then
        local err = false
        if KEEPS_ERROR[to] then
          if e ~= '~' then err = opt(e) else err = redis.call('HGET', tk, 'error') end
        end
        hv = histAppend(hcur, st, to, v, err)
      end
      if e == '~' then
        if result and hv then
          redis.call('HSET', tk, 'status', to, 'finishedAt', nowS, 'version', v, 'result', result, '_h', hv)
        elseif result then
          redis.call('HSET', tk, 'status', to, 'finishedAt', nowS, 'version', v, 'result', result)
        elseif hv then
          redis.call('HSET', tk, 'status', to, 'finishedAt', nowS, 'version', v, '_h', hv)
        else
          redis.call('HSET', tk, 'status', to, 'finishedAt', nowS, 'version', v)
        end
      else
        local set = { 'status', to, 'finishedAt', nowS, 'version', v }
        if result then
          set[#set + 1] = 'result'
          set[#set + 1] = result
        end
        if hv then
          set[#set + 1] = '_h'
          set[#set + 1] = hv
        end
        e = opt(e)
        if e then
          set[#set + 1] = 'error'
          set[#set + 1] = e
        else
          redis.call('HDEL', tk, 'error')
        end
        redis.call('HSET', tk, unpack(set))
      end
      if seq == '' then row(taskOf(id)) end
    end
    if gone then
      deleteTask(id) -- its key, an unfired boost; no status / finished entry was written
    elseif rm then
      if rmType == '' then rmType = cjson.decode(redis.call('HGET', tk, 'd'))[2] end
      local kk = keptKey(to, rmType)
      redis.call('ZADD', kk, nowS, id)
      redis.call('HSET', tk, '_r', kk)
      trims[#trims + 1] = { kk, rmCount, rmAge }
    end
  end
  a = nxt
end
if #leaseRem > 0 then
  redis.call('ZREM', K.leases, unpack(leaseRem))
  if #pollRem > 0 then redis.call('ZREM', K.polls, unpack(pollRem)) end
  if #deadRem > 0 then redis.call('ZREM', K.deadlines, unpack(deadRem)) end
  for s, ids in pairs(stRem) do redis.call('ZREM', dk('status', s), unpack(ids)) end
  for s, list in pairs(stAdd) do redis.call('ZADD', dk('status', s), unpack(list)) end
  if #finAdd > 0 then redis.call('ZADD', K.finished, unpack(finAdd)) end
  for prov, c in pairs(provDec) do hincr(K.inflight_p, prov, -c) end
end
-- removal trims, once every task of the call is written (a task finished earlier in this call may go)
for _, tr in ipairs(trims) do
  local kk, count, age = tr[1], tr[2], tr[3]
  local old = {}
  if count ~= '' then
    local extra = redis.call('ZCARD', kk) - tonumber(count)
    if extra > 0 then old = redis.call('ZRANGE', kk, '0', math.min(extra, TRIM_MAX) - 1) end
  end
  if age ~= '' and #old < TRIM_MAX then
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', kk, '-inf', fmt(NOW - tonumber(age)), 'LIMIT', #old, TRIM_MAX - #old)) do
      old[#old + 1] = id
    end
  end
  for _, id in ipairs(old) do
    if TERMINAL[redis.call('HGET', dk('task', id), 'status') or ''] then deleteTask(id) end
    redis.call('ZREM', kk, id)
  end
end
wake()
return out
