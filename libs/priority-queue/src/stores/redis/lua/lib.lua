-- Above ~400 lines on purpose: the one copy of the helpers every operation script shares (order
-- key, lanes, slots, leases, history, fair share, boosts); scripts.ts gives each script only the
-- helpers it uses, so a call never pays for the rest.
-- lib.lua: helpers shared by every operation script. Never run alone: scripts.ts builds each
-- script as  <prelude generated from keys.ts> .. lib.lua (the part up to `-- helpers:`, then the
-- helpers the operation uses) .. <operation>.lua
--
-- Calling convention of every operation script:
--   KEYS[1]  `{prefix:queue}:seq`: routes the call to the queue's slot in a Redis Cluster. Every
--            key of the queue shares its hash tag and is built here from ARGV[1]: the fixed
--            keys of keys.ts as K.<name>, the keys that embed an id with dk(kind, id)
--   ARGV[1]  base `{prefix:queue}:` of every key
--   ARGV[2]  now in epoch ms, or '' to use the Redis TIME (the store clock)
--   ARGV[3]  agingIntervalMs (0 = off; fixes the order key layout), then optionally ':' and the
--            historyLimit of the calling store (0 or absent = keep no history), then ':f' when
--            the store has fair share (DESIGN §7 fairness: 'tenant'; also fixes the layout)
--   ARGV[4..] the operation's own arguments, listed in its header
-- Optional string arguments are '' for null and '+' .. value otherwise ('~' = leave unchanged
-- where a header says so). Errors are replies 'PQ_STALE', 'PQ_NOTFOUND', 'PQ_STATE <status>'.

local BASE = ARGV[1]
-- K.<name> = BASE .. name for the fixed keys of keys.ts (built on first use, then cached;
-- scripts.ts checks when it loads the scripts that every K.<name> is a key of keys.ts)
local K = setmetatable({}, { __index = function(t, name)
  local v = BASE .. name
  rawset(t, name, v)
  return v
end })
local function dk(kind, id) return BASE .. DYN[kind] .. id end

-- NOW in ms and NOWS, its decimal text. From TIME the text is made of the reply's own digits
-- (seconds, then the first 3 of the microseconds padded to 6): string.format and tonumber are the
-- priciest calls a script makes (~2k instructions each; a number passed to redis.call is formatted
-- too, hence the string literals '0' and '1' in the hot commands)
local NOW, NOWS
if ARGV[2] ~= '' then
  NOW = tonumber(ARGV[2])
  NOWS = string.format('%d', NOW)
else
  local t = redis.call('TIME')
  NOWS = t[1] .. string.sub(string.rep('0', 6 - #t[2]) .. t[2], 1, 3)
  NOW = tonumber(NOWS)
end
local AGING, HIST, FAIR = 0, 0, false
if ARGV[3] ~= '0:0' then -- the default mode (no aging, history or fair share) needs no parsing
  AGING = tonumber(string.match(ARGV[3], '^%d+'))
  HIST = tonumber(string.match(ARGV[3], '^%d+:(%d+)')) or 0
  FAIR = string.sub(ARGV[3], -2) == ':f'
end
-- width of an order key (aging and fair share never go together: each adds 16 hex digits) and
-- where its priority part starts
local KEYW, PRI_AT = 50, 1
if AGING > 0 then KEYW, PRI_AT = 66, 17 end
if FAIR then KEYW = 66 end
-- PENDING_SUBMIT tasks also sit in a due set per priority (keys.ts `due`, scored by runAt): with
-- aging (stats' oldest wait) and with fair share (a lane's first member is then not its oldest)
local DUESETS = AGING > 0 or FAIR

local SEP = '\031'
local PENDING, SUBMITTING, SUBMITTED, RUNNING = 'PENDING_SUBMIT', 'SUBMITTING', 'SUBMITTED', 'RUNNING'
-- set when work may have become claimable: the script publishes at its end. 's' (a create's):
-- only submissions may have (WakeSubscriptions passes it on as the WakeReason 'submissions');
-- true: anything may have, and it wins over 's'
local WOKE = false

-- helpers: scripts.ts gives each operation only the definitions below that it uses (directly or
-- through another one), so a call does not pay for building the others; every top-level
-- definition starts at column 0 with `local`. The fair share helpers (`local function fair*`,
-- together) are built only when the call has FAIR: call them only where FAIR holds.
local INFLIGHT = { SUBMITTING = true, SUBMITTED = true, RUNNING = true }
local TERMINAL = { SUCCEEDED = true, FAILED = true, CANCELED = true, TIMED_OUT = true, SUBMIT_UNKNOWN = true }
local function fmt(n) return string.format('%d', n) end
local function fail(code) error({ err = code }) end
local function opt(s)
  if s == '' then return false end
  return string.sub(s, 2)
end
local function wake()
  if WOKE then redis.call('PUBLISH', BASE .. WAKE, WOKE == 's' and 's' or '1') end
end
-- t[k], a table made and stored there on first use (lists and caches keyed by lane, status...).
local function subtable(t, k)
  local s = t[k]
  if not s then
    s = {}
    t[k] = s
  end
  return s
end
local function hincr(key, field, by)
  local v = redis.call('HINCRBY', key, field, by)
  if v <= 0 then redis.call('HDEL', key, field) end
end
local function taskOf(id) return redis.call('HGETALL', dk('task', id)) end

-- Order key: byte-for-byte core/order-key.ts encodeOrderKey (fixed-width hex, lexicographic =
-- DESIGN §2 order; the parts are core's orderParts, each ORDER_KEY_WIDTHS wide). All arithmetic
-- stays exact on doubles: 64-bit values are two 32-bit limbs.
local TWO32 = 4294967296
local TWO52 = 4503599627370496
local function hex14(v)
  local hi = math.floor(v / TWO32)
  return string.format('%06x%08x', hi, v - hi * TWO32)
end
local function agedHex(runAt, pri)
  -- runAt - pri * AGING + 2^63 as 16 hex digits
  local a = math.abs(pri)
  local a1 = math.floor(a / 65536)
  local x0, x1 = (a - a1 * 65536) * AGING, a1 * AGING
  local x0h = math.floor(x0 / TWO32)
  local x1h = math.floor(x1 / 65536)
  local ph, pl = x0h + x1h, (x0 - x0h * TWO32) + (x1 - x1h * 65536) * 65536
  if pl >= TWO32 then pl, ph = pl - TWO32, ph + 1 end
  local r = math.abs(runAt)
  local rh = math.floor(r / TWO32)
  local hi, lo
  if runAt >= 0 then
    hi, lo = 2147483648 + rh, r - rh * TWO32
  else
    hi, lo = 2147483648 - rh, -(r - rh * TWO32)
    if lo < 0 then lo, hi = lo + TWO32, hi - 1 end
  end
  if pri > 0 then
    hi, lo = hi - ph, lo - pl
    if lo < 0 then lo, hi = lo + TWO32, hi - 1 end
  elseif pri < 0 then
    hi, lo = hi + ph, lo + pl
    if lo >= TWO32 then lo, hi = lo - TWO32, hi + 1 end
  end
  return string.format('%08x%08x', hi, lo)
end
-- `tag`: the task's fair tag as 16 hex digits (its hash field `fairTag`, fairHex), with FAIR only.
local function orderKey(pri, runAt, createdAt, seq, tag)
  local s = ''
  if AGING > 0 then s = agedHex(runAt, pri) end
  s = s .. string.format('%08x', 2147483647 - pri)
  if FAIR then s = s .. tag end
  local c = hex14(createdAt + TWO52)
  if runAt == createdAt then return s .. c .. c .. hex14(seq) end -- a task due at its creation
  return s .. hex14(runAt + TWO52) .. c .. hex14(seq)
end

-- DESIGN §7 fair share (FAIR), mirroring core/fairness.ts: V[p] in K.fairv (field: priority),
-- F[t,p] in K.fairf (field: fairField), weights in K.lim_w, all decimal integers. Tags are
-- doubles here, exact while <= FAIR_MAX (2^53 - 1, generated from codec.ts MAX_REDIS_FAIR_TAG:
-- a Lua number is a double, so Redis stops where the memory store does, not at core's 2^63 - 1).
-- A task keeps its tag in its hash field `fairTag` as 16 hex digits (the order key's part).
-- fairHex: a tag as the order key's 16 hex digits (core/order-key.ts ORDER_KEY_WIDTHS.fairTag).
local function fairHex(tag)
  local hi = math.floor(tag / TWO32)
  return string.format('%08x%08x', hi, tag - hi * TWO32)
end
-- fairOfHex: 16 hex digits back to the tag (two 32-bit limbs: exact).
local function fairOfHex(h)
  return tonumber(string.sub(h, 1, 8), 16) * TWO32 + tonumber(string.sub(h, 9, 16), 16)
end
-- fairField: the K.fairf field of F[t,p]; a task without a tenant is tenant '' (core/fairness.ts
-- tenantKeyOf, NO_TENANT: real tenant ids are never empty).
local function fairField(pri, tenant) return fmt(pri) .. SEP .. (tenant or '') end
-- fairNextTag: core/fairness.ts nextFinishTag, F = max(F, V) + floor(FAIR_QUANTUM / w); past
-- FAIR_MAX the call fails with PQ_FAIRTAG (FairTagOverflowError) before it writes anything.
local function fairNextTag(finish, vt, weight)
  local base = finish
  if vt > base then base = vt end
  local tag = base + math.floor(FAIR_QUANTUM / weight)
  if tag > FAIR_MAX then fail('PQ_FAIRTAG') end
  return tag
end
-- fairAdvance: core/fairness.ts advanceVirtualTime, V = max(V, tag).
local function fairAdvance(vt, tag)
  if tag > vt then return tag end
  return vt
end
-- fairObsolete: core/fairness.ts finishTagObsolete (an F <= V changes no later tag: dropped).
local function fairObsolete(finish, vt) return finish <= vt end
-- fairWeight: core/admission.ts effectiveTenantWeight (tenantless tasks and unlisted tenants: 1).
local function fairWeight(tenant)
  if not tenant then return DEFAULT_TENANT_WEIGHT end
  return tonumber(redis.call('HGET', K.lim_w, tenant)) or DEFAULT_TENANT_WEIGHT
end
-- fairTagger: core/fairness.ts FairTags.tag for one script call. t.tag(tenant, pri) tags a task
-- of `tenant` (false / nil = none) at `pri` and returns the tag; each F, V and weight is read
-- once, the moves are kept here until t.save() writes them. Nothing is written before save, so
-- a batch that overflows (fairNextTag) fails with nothing written: all or none.
local function fairTagger()
  local F, V, Wt, moved = {}, {}, {}, {}
  local t = {}
  function t.tag(tenant, pri)
    local field = fairField(pri, tenant)
    local f = F[field]
    if not f then f = tonumber(redis.call('HGET', K.fairf, field)) or 0 end
    local p = fmt(pri)
    local v = V[p]
    if not v then
      v = tonumber(redis.call('HGET', K.fairv, p)) or 0
      V[p] = v
    end
    local tk = tenant or ''
    local w = Wt[tk]
    if not w then
      w = fairWeight(tenant)
      Wt[tk] = w
    end
    local tag = fairNextTag(f, v, w)
    if not F[field] then moved[#moved + 1] = field end
    F[field] = tag
    return tag
  end
  function t.save()
    for i = 1, #moved, 500 do
      local args = {}
      for j = i, math.min(i + 499, #moved) do
        args[#args + 1] = moved[j]
        args[#args + 1] = fmt(F[moved[j]])
      end
      redis.call('HSET', K.fairf, unpack(args))
    end
  end
  return t
end
-- fairClaimed: core/fairness.ts FairTags.claimed for the claims of one script call: for each
-- level `p` (decimal) the largest tag claimed there, `vmax[p]`, and the F fields of the claimed
-- tasks' tenants, `fields` (field -> p). V[p] advances to it (fairAdvance); an F that is now
-- <= V[p] is dropped (fairObsolete).
local function fairClaimed(vmax, fields)
  local V = {}
  for p, tag in pairs(vmax) do
    local v = fairAdvance(tonumber(redis.call('HGET', K.fairv, p)) or 0, tag)
    V[p] = v
    redis.call('HSET', K.fairv, p, fmt(v))
  end
  for field, p in pairs(fields) do
    local f = tonumber(redis.call('HGET', K.fairf, field))
    if f and fairObsolete(f, V[p]) then redis.call('HDEL', K.fairf, field) end
  end
end

-- Status index and pending counts per priority. SUBMITTING has no status set: every
-- SUBMITTING task holds a lease, so list and stats find them in K.leases (a claim and its
-- complete write two sorted sets less per task).
local function moveStatus(id, from, to, seq, pri)
  if from and from ~= SUBMITTING then redis.call('ZREM', dk('status', from), id) end
  if to ~= SUBMITTING then redis.call('ZADD', dk('status', to), seq, id) end
  if from == PENDING then hincr(K.pendcount, pri, '-1') end
  if to == PENDING then redis.call('HINCRBY', K.pendcount, pri, '1') end
end

-- The SUBMITTING tasks (no status set, see moveStatus) as { seq, id } pairs sorted by seq, from
-- the lease set: O(leases), for list and stats only.
local function submittingTasks()
  local out = {}
  for _, id in ipairs(redis.call('ZRANGE', K.leases, '0', '-1')) do
    local f = redis.call('HMGET', dk('task', id), 'status', 'seq')
    if f[1] == SUBMITTING then out[#out + 1] = { tonumber(f[2]), id } end
  end
  table.sort(out, function(a, b) return a[1] < b[1] end)
  return out
end

-- Lanes (LANES.md). A lane is ready (member headKey .. laneId in K.ready), parked (on one
-- resource), or empty. Parked lanes are re-checked only when their resource frees.
local function refreshReady(lane)
  if redis.call('HEXISTS', K.lanepark, lane) == 1 then return end
  local head = redis.call('ZRANGE', dk('lane', lane), '0', '0')[1]
  local cur = redis.call('HGET', K.laneready, lane)
  if not head then
    if cur then
      redis.call('ZREM', K.ready, cur)
      redis.call('HDEL', K.laneready, lane)
    end
    return
  end
  local m = string.sub(head, 1, KEYW) .. lane
  if cur ~= m then
    if cur then redis.call('ZREM', K.ready, cur) end
    redis.call('ZADD', K.ready, '0', m)
    redis.call('HSET', K.laneready, lane, m)
  end
end

-- `k` = the task's order key when already computed (and stored in its `_k` field by the caller);
-- `tag` = its fairTag field (16 hex digits), with FAIR only.
local function laneAdd(id, pri, runAt, createdAt, seq, lane, k, tag)
  if not k then
    k = orderKey(pri, runAt, createdAt, seq, tag)
    redis.call('HSET', dk('task', id), '_k', k)
  end
  local lk = dk('lane', lane)
  redis.call('ZADD', lk, '0', k .. id)
  if DUESETS then redis.call('ZADD', dk('due', fmt(pri)), fmt(runAt), id) end
  -- only a new head can change the lane's place among the ready lanes
  if redis.call('ZRANK', lk, k .. id) == 0 then refreshReady(lane) end
end

local function laneDel(id, lane, k, pri)
  local lk = dk('lane', lane)
  local wasHead = redis.call('ZRANK', lk, k .. id) == 0
  redis.call('ZREM', lk, k .. id)
  redis.call('HDEL', dk('task', id), '_k')
  if DUESETS then redis.call('ZREM', dk('due', fmt(pri)), id) end
  if wasHead then refreshReady(lane) end
end

-- A PENDING_SUBMIT task goes to its lane when due, else to the delayed set.
local function enqueue(id, pri, runAt, createdAt, seq, lane, tag)
  if runAt <= NOW then
    laneAdd(id, pri, runAt, createdAt, seq, lane, nil, tag)
    WOKE = true
  else
    redis.call('HDEL', dk('task', id), '_k')
    redis.call('ZADD', K.delayed, fmt(runAt), id)
  end
end

local function enqueueStored(id)
  -- a task back in the order (release, retry, requeue, promotion) keeps its fair tag, as on memory
  local f = redis.call('HMGET', dk('task', id), 'priority', 'runAt', 'createdAt', 'seq', '_l', 'fairTag')
  enqueue(id, tonumber(f[1]), tonumber(f[2]), tonumber(f[3]), tonumber(f[4]), f[5], f[6])
end

-- A PENDING_SUBMIT task takes priority `pri` (change_priority, a deadline boost): pending counts,
-- updatedAt, version + 1 and, when due, its lane member re-keyed (a delayed task keeps its place
-- in `delayed`: promotion keys it by the new priority). With FAIR, a move to another level
-- re-tags the task there as a create would (core/fairness.ts; its own level: tag kept), before
-- anything is written (an overflow fails the call unchanged). `f` = HMGET of PRI_FIELDS.
local PRI_FIELDS = { 'priority', 'runAt', 'createdAt', 'seq', '_l', '_k', 'status', 'boostPriority', 'boostAt',
  'tenantId', 'fairTag' }
local function reprioritize(id, f, pri)
  local tk = dk('task', id)
  local old = tonumber(f[1])
  local tag = f[11]
  if FAIR and pri ~= old then
    local tagger = fairTagger()
    tag = fairHex(tagger.tag(f[10], pri))
    tagger.save()
    redis.call('HSET', tk, 'fairTag', tag)
  end
  if f[6] then laneDel(id, f[5], f[6], old) end
  hincr(K.pendcount, fmt(old), -1)
  redis.call('HINCRBY', K.pendcount, fmt(pri), '1')
  redis.call('HSET', tk, 'priority', fmt(pri), 'updatedAt', NOWS)
  redis.call('HINCRBY', tk, 'version', '1')
  if f[6] then laneAdd(id, pri, tonumber(f[2]), tonumber(f[3]), tonumber(f[4]), f[5], nil, tag) end
end

-- Member of a task's unfired boost in K.boosts (scored by boostAt): seq first, so that boosts
-- due at the same time fire in seq order (core/boost.ts compareBoosts).
local function boostMember(seq, id) return hex14(seq) .. id end

-- DESIGN §7 deadline boosts, mirroring core/boost.ts (compareBoosts, boostedPriority): fires up
-- to `max` unfired boosts with boostAt <= NOW in (boostAt, seq) order. A task still
-- PENDING_SUBMIT below its boostPriority takes it (reprioritize: version + 1, re-keyed in its
-- lane); any other task is left as it is; either way the boost has fired (leaves K.boosts).
-- With FAIR each raise re-tags the task, in this firing order; a boost leaves K.boosts with its
-- own raise, so that a re-tag that overflows (PQ_FAIRTAG) leaves it and the later ones unfired.
-- Returns { fromPriority, HGETALL as the boost wrote it, ... } of the raised tasks, in firing
-- order, and true when more due boosts are left than `max`.
local function applyDueBoosts(max)
  local due = redis.call('ZRANGEBYSCORE', K.boosts, '-inf', NOWS, 'LIMIT', '0', max)
  local out = {}
  if #due == 0 then return out, false end
  if not FAIR then redis.call('ZREM', K.boosts, unpack(due)) end
  for _, m in ipairs(due) do
    local id = string.sub(m, 15)
    local f = redis.call('HMGET', dk('task', id), unpack(PRI_FIELDS))
    local to = tonumber(f[8])
    if f[7] == PENDING and to and tonumber(f[1]) < to then
      reprioritize(id, f, to)
      out[#out + 1] = f[1]
      out[#out + 1] = taskOf(id)
    end
    if FAIR then redis.call('ZREM', K.boosts, m) end
  end
  return out, #due == max and redis.call('ZCOUNT', K.boosts, '-inf', NOWS) > 0
end

-- Moves up to `max` due delayed tasks into their lanes (what a claim does first); true when more
-- due ones are left in the delayed set.
local function promoteDue(max)
  local due = redis.call('ZRANGEBYSCORE', K.delayed, '-inf', NOWS, 'LIMIT', '0', max)
  for _, id in ipairs(due) do
    redis.call('ZREM', K.delayed, id)
    enqueueStored(id)
  end
  return #due == max and redis.call('ZCOUNT', K.delayed, '-inf', NOWS) > 0
end

-- Every lane that may hold due tasks: ready or parked (an empty lane is neither, or is skipped
-- by its reader).
local function laneIds()
  local out, seen = {}, {}
  for _, h in ipairs({ K.laneready, K.lanepark }) do
    for _, lane in ipairs(redis.call('HKEYS', h)) do
      if not seen[lane] then
        seen[lane] = true
        out[#out + 1] = lane
      end
    end
  end
  return out
end

-- Every limit, as get_limits.lua returns it: { { providerKey, HGETALL of its limits, ... },
-- HGETALL lim_a, HGETALL lim_t, defaultTenantQuota or nil, HGETALL lim_c, HGETALL lim_w }.
local function limitsSnapshot()
  local providers = {}
  for _, p in ipairs(redis.call('SMEMBERS', K.providers)) do
    providers[#providers + 1] = p
    providers[#providers + 1] = redis.call('HGETALL', dk('provider', p))
  end
  return { providers, redis.call('HGETALL', K.lim_a), redis.call('HGETALL', K.lim_t),
    redis.call('HGET', K.lim_meta, 'defaultTenantQuota'), redis.call('HGETALL', K.lim_c), redis.call('HGETALL', K.lim_w) }
end

-- Takes a PENDING_SUBMIT task out of its lane or the delayed set.
local function dequeue(id)
  local f = redis.call('HMGET', dk('task', id), '_k', '_l', 'priority')
  if f[1] then
    laneDel(id, f[2], f[1], tonumber(f[3]))
  else
    redis.call('ZREM', K.delayed, id)
  end
end

local function park(lane, res)
  local cur = redis.call('HGET', K.laneready, lane)
  if cur then
    redis.call('ZREM', K.ready, cur)
    redis.call('HDEL', K.laneready, lane)
  end
  redis.call('HSET', K.lanepark, lane, res)
  redis.call('SADD', dk('parked', res), lane)
  redis.call('SADD', K.parkedres, res)
end

-- Moves every lane parked on `res` back to ready (re-checked at the next claim).
local function unpark(res)
  local key = dk('parked', res)
  local lanes = redis.call('SMEMBERS', key)
  if #lanes == 0 then return 0 end
  redis.call('DEL', key)
  redis.call('SREM', K.parkedres, res)
  if string.sub(res, 1, 2) == 'r' .. SEP then redis.call('ZREM', K.ratewake, string.sub(res, 3)) end
  for _, lane in ipairs(lanes) do
    if redis.call('HGET', K.lanepark, lane) == res then
      redis.call('HDEL', K.lanepark, lane)
      refreshReady(lane)
    end
  end
  WOKE = true
  return #lanes
end

local function unparkAll()
  for _, res in ipairs(redis.call('SMEMBERS', K.parkedres)) do unpark(res) end
end

-- Admission slots (DESIGN §3): held by SUBMITTING / SUBMITTED / RUNNING tasks.
-- Frees the account / tenant / concurrency-key slots of one task (not the provider's in-flight
-- count, which a batch may decrement once per provider) and unparks the lanes waiting on them.
local function freeKeySlots(prov, acct, ten, ck)
  if acct then
    hincr(K.inflight_a, prov .. SEP .. acct, '-1')
    unpark('a' .. SEP .. prov .. SEP .. acct)
  end
  if ten then
    hincr(K.inflight_t, ten, '-1')
    unpark('t' .. SEP .. ten)
  end
  if ck then
    hincr(K.inflight_c, ck, '-1')
    unpark('c' .. SEP .. ck)
  end
end

local function freeSlots(prov, acct, ten, ck)
  hincr(K.inflight_p, prov, '-1')
  freeKeySlots(prov, acct, ten, ck)
end

local function freeSlotsOf(id)
  local f = redis.call('HMGET', dk('task', id), 'providerKey', 'accountId', 'tenantId', 'concurrencyKey')
  freeSlots(f[1], f[2], f[3], f[4])
end

local LEASE_FIELDS = { 'leaseOwner', 'leaseId', 'leaseUntil' }
local function clearLease(id)
  redis.call('ZREM', K.leases, id)
  redis.call('HDEL', dk('task', id), unpack(LEASE_FIELDS))
end

local function setLease(id, owner, leaseId, leaseMs)
  local tk = dk('task', id)
  redis.call('HSET', tk, 'leaseOwner', owner, 'leaseId', leaseId, 'leaseUntil', fmt(NOW + leaseMs), 'updatedAt', NOWS)
  redis.call('HINCRBY', tk, 'version', '1')
  redis.call('ZADD', K.leases, fmt(NOW + leaseMs), id)
end

-- A SUBMITTED / RUNNING task without a lease waits in the poll set; a cancel makes it due now.
local function schedulePoll(id)
  local f = redis.call('HMGET', dk('task', id), 'nextPollAt', 'cancelRequested')
  local at = tonumber(f[1]) or NOW
  if f[2] == '1' and at > NOW then at = NOW end
  redis.call('ZADD', K.polls, fmt(at), id)
end

-- Fields finalize needs, in this order (callers that already read them pass them in).
local FINAL_FIELDS = { 'status', 'seq', 'priority', 'providerKey', 'accountId', 'tenantId', 'concurrencyKey',
  'deadlineAt', 'version' }

-- Per-task history (core/history.ts): field `_h` of the task hash, its last HIST transitions as
-- `at,<from><to>,version[,error]` (one-digit status codes, HIST_CODE) joined by \30. The entry
-- keeps the error of a transition that ends an attempt or the task without success: `err` when
-- the caller knows it (false = none), else the task's. Callers check HIST > 0 (none kept at 0).
local HIST_CODE = { PENDING_SUBMIT = '0', SUBMITTING = '1', SUBMITTED = '2', RUNNING = '3', SUCCEEDED = '4', FAILED = '5',
  CANCELED = '6', TIMED_OUT = '7', SUBMIT_UNKNOWN = '8' }
local KEEPS_ERROR = { FAILED = true, CANCELED = true, TIMED_OUT = true, SUBMIT_UNKNOWN = true }
local HIST_AT = false -- `now,` of this call, made once
-- `cur` (false = no entry yet) with one more entry, the oldest ones dropped beyond HIST.
local function histAppend(cur, from, to, version, err)
  if not HIST_AT then HIST_AT = NOWS .. ',' end
  local e = HIST_AT .. HIST_CODE[from] .. HIST_CODE[to] .. ',' .. version
  if err then e = e .. ',' .. string.gsub(string.sub(err, 1, 2000), '\30', ' ') end
  if not cur then return e end
  local h = cur .. '\30' .. e
  -- an entry takes 7 bytes at least: a shorter text cannot hold more than HIST of them
  if #h > 7 * HIST then
    local n = 1
    for _ in string.gmatch(h, '\30') do n = n + 1 end
    while n > HIST do
      h = string.sub(h, string.find(h, '\30', 1, true) + 1)
      n = n - 1
    end
  end
  return h
end
-- One transition into the task's history: a read and a write of `_h` (and of the error).
local function hist(id, from, to, version, err)
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, '_h', 'error')
  if not (KEEPS_ERROR[to] or (from == SUBMITTING and to == PENDING)) then
    err = false
  elseif err == nil then
    err = f[2]
  end
  redis.call('HSET', tk, '_h', histAppend(f[1], from, to, version, err))
end

-- Any status -> terminal `to`: indexes, slots, lease, next poll, deadline (an unfired boost
-- stays: a retry of the finished task may bring it back before boostAt; purge drops it). `f` = the FINAL_FIELDS
-- values, `extra` = more fields to set, `dels` = more fields to remove (null results / errors).
local function finalizeKnown(id, f, to, extra, dels)
  local tk = dk('task', id)
  local from = f[1]
  if from == PENDING then dequeue(id) end
  if INFLIGHT[from] then
    freeSlots(f[4], f[5], f[6], f[7])
    redis.call('ZREM', K.leases, id)
    if from ~= SUBMITTING then redis.call('ZREM', K.polls, id) end
  end
  local del = { 'leaseOwner', 'leaseId', 'leaseUntil', 'nextPollAt' }
  for _, d in ipairs(dels or {}) do del[#del + 1] = d end
  redis.call('HDEL', tk, unpack(del))
  if f[8] then redis.call('ZREM', K.deadlines, id) end
  moveStatus(id, from, to, f[2], f[3])
  redis.call('ZADD', K.finished, NOWS, id)
  redis.call('HSET', tk, 'status', to, 'finishedAt', NOWS, 'updatedAt', NOWS,
    'version', fmt(tonumber(f[9]) + 1), unpack(extra or {}))
  if HIST > 0 then hist(id, from, to, tonumber(f[9]) + 1) end
end

local function finalize(id, to, extra)
  finalizeKnown(id, redis.call('HMGET', dk('task', id), unpack(FINAL_FIELDS)), to, extra)
end

-- SUBMITTING -> PENDING_SUBMIT (release; retry and expired idempotent submit through requeue):
-- slots freed, lease cleared, the field / value pairs `...` set, version + 1, back in the
-- order by its stored fields.
local function unclaim(id, ...)
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, 'status', 'seq', 'priority')
  freeSlotsOf(id)
  clearLease(id)
  moveStatus(id, f[1], PENDING, f[2], f[3])
  redis.call('HSET', tk, 'status', PENDING, 'updatedAt', NOWS, ...)
  local v = redis.call('HINCRBY', tk, 'version', '1')
  if HIST > 0 then hist(id, f[1], PENDING, v) end
  enqueueStored(id)
end

-- unclaim with attempts + 1 and runAt set (retry.lua, recover_expired.lua).
local function requeue(id, runAt, extra)
  redis.call('HINCRBY', dk('task', id), 'attempts', '1')
  unclaim(id, 'runAt', fmt(runAt), unpack(extra or {}))
end

-- Fenced operations: the caller's lease id and version must be current.
local function fenced(id, leaseId, version)
  local f = redis.call('HMGET', dk('task', id), 'status', 'leaseId', 'version')
  if not f[1] then fail('PQ_NOTFOUND') end
  -- a terminal task keeps the lease fields of its last lease (complete.lua) but holds none
  if f[2] ~= leaseId or f[3] ~= version or TERMINAL[f[1]] then fail('PQ_STALE') end
  return f[1]
end

-- Removal (core/removal.ts): finished tasks kept under a count / age sit in the zset
-- kept:<side>:<type> (side 'ok' for SUCCEEDED, else 'fail') scored by finishedAt; the task's hash
-- field `_r` names that zset while it is in it.
local function keptKey(status, type)
  if status == 'SUCCEEDED' then return dk('kept', 'ok:' .. type) end
  return dk('kept', 'fail:' .. type)
end

-- Deletes a terminal task and everything that names it (purge.lua, complete.lua's removal): its
-- status entry, an unfired boost (its task finished before boostAt), its kept set, its key.
local function deleteTask(id)
  local tk = dk('task', id)
  local f = redis.call('HMGET', tk, 'status', 'idempotencyKey', '_r', 'boostAt', 'seq')
  if f[1] then redis.call('ZREM', dk('status', f[1]), id) end
  if f[4] then redis.call('ZREM', K.boosts, boostMember(tonumber(f[5]), id)) end
  if f[3] then redis.call('ZREM', f[3], id) end
  if f[2] and redis.call('HGET', K.idem, f[2]) == id then redis.call('HDEL', K.idem, f[2]) end
  redis.call('DEL', tk)
  redis.call('ZREM', K.finished, id)
end
