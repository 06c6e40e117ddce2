-- query: one page of tasks of a status with filters (core/task-query.ts), read in one step.
-- * PENDING_SUBMIT: due tasks in DESIGN §2 order, a merge of the lanes (each a sorted set by order
--   key, read from the cursor on with BYLEX, lanes of other admission keys skipped), then the
--   not-yet-due ones by (runAt, seq) from the delayed set. Due delayed tasks are first moved
--   into their lanes, as a claim would (up to 5,000).
-- * other statuses: newest first from the status set (SUBMITTING: from the lease set).
-- At most `budget` candidates are read per call: a page cut short by it reports where it
-- stopped, and the caller's cursor goes on from there.
-- Cost: O((lanes + budget) * log n) for PENDING_SUBMIT, O(budget * log n) otherwise.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: laneready, lanepark, lane:*,
--       delayed, due:* (aging, fair share), ready, status:*, leases, task:<id>
-- ARGV[4] status, ARGV[5] want (page size + 1), ARGV[6] budget,
-- ARGV[7] cursor phase: '' (from the start), 'd' (due: after ARGV[8..11] = priority, runAt,
--         createdAt, seq), 'l' (not yet due: after ARGV[8..9] = runAt, seq), 's' (before seq ARGV[8]),
-- ARGV[12..17] filters (opt each): type (as its JSON string), tenantId, providerKey, accountId, minPriority, maxPriority
-- ARGV[18] with fair share and cursor phase 'd': the fair tag (decimal) after which to go on
-- Returns: { now, { HGETALL, ... } in page order, stop } where stop is nil when the page ended
--          by itself, else where the budget ran out: { 'd', priority, runAt, createdAt, seq[, fair tag as 16 hex digits] } |
--          { 'l', runAt, seq } | { 's', seq } of the last candidate read
local status, want, budget, phase = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local fTypeJson, fTenant, fProvider, fAccount = opt(ARGV[12]), opt(ARGV[13]), opt(ARGV[14]), opt(ARGV[15])
local fType = fTypeJson and cjson.decode(fTypeJson)
-- the task's type against the filter without parsing `d` (which holds the payload): `d` starts
-- with the JSON of the id and of the type (codec.ts dJson); an id that JSON escapes is parsed
local function typeIs(id, d)
  if not string.find(id, '["\\]') then return string.sub(d, 1, #id + #fTypeJson + 5) == '["' .. id .. '",' .. fTypeJson .. ',' end
  return cjson.decode(d)[2] == fType
end
local minP, maxP = tonumber(opt(ARGV[16]) or ''), tonumber(opt(ARGV[17]) or '')
local out = {}
local read = 0
local stop = nil

-- the filters a task hash answers (the lane-level ones are checked per lane where possible)
local fields = { 'providerKey', 'accountId', 'tenantId', 'priority' }
if fType then fields[5] = 'd' end
local function passes(id, laneChecked, pri)
  local f
  if not laneChecked or fType or not pri then f = redis.call('HMGET', dk('task', id), unpack(fields)) end
  if not laneChecked then
    if (fProvider and f[1] ~= fProvider) or (fAccount and f[2] ~= fAccount) or (fTenant and f[3] ~= fTenant) then return false end
  end
  local p = pri or tonumber(f[4])
  if (minP and p < minP) or (maxP and p > maxP) then return false end
  if fType and not typeIs(id, f[5]) then return false end
  return true
end

local function take(id)
  out[#out + 1] = taskOf(id)
end

if status ~= PENDING then
  local before = tonumber(ARGV[8])
  if phase ~= 's' then before = nil end
  local lastSeq = nil
  local function visit(id, seq)
    read = read + 1
    lastSeq = seq
    if passes(id, false, nil) then take(id) end
  end
  if status == SUBMITTING then
    local subs = submittingTasks() -- no status set (lib.lua moveStatus): O(leases)
    for i = #subs, 1, -1 do
      if #out >= want or read >= budget then break end
      if not before or subs[i][1] < before then visit(subs[i][2], subs[i][1]) end
    end
    if #out < want and read >= budget and lastSeq and subs[1][1] < lastSeq then stop = { 's', fmt(lastSeq) } end
  else
    local key = dk('status', status)
    local hi = '+inf'
    if before then hi = '(' .. fmt(before) end
    while #out < want and read < budget do
      local ids = redis.call('ZREVRANGEBYSCORE', key, hi, '-inf', 'WITHSCORES', 'LIMIT', '0', math.min(budget - read, 200))
      if #ids == 0 then break end
      for i = 1, #ids, 2 do
        if #out >= want then break end
        visit(ids[i], tonumber(ids[i + 1]))
      end
      hi = '(' .. fmt(lastSeq)
    end
    if #out < want and read >= budget and redis.call('ZCOUNT', key, '-inf', hi) > 0 then stop = { 's', fmt(lastSeq) } end
  end
  return { NOWS, out, stop }
end

-- PENDING_SUBMIT
promoteDue(5000)
local P8 = 1 -- offset of the priority part in an order key
if AGING > 0 then P8 = 17 end
local function priOf(member) return 2147483647 - tonumber(string.sub(member, P8, P8 + 7), 16) end

if phase == '' or phase == 'd' then
  -- lower bound of every lane: after the cursor's key, and (without aging) at the highest
  -- priority the filter allows; upper bound: the lowest priority it allows
  local lo, hi = '-', '+'
  if phase == 'd' then
    local tag = FAIR and fairHex(tonumber(ARGV[18]) or 0) -- a cursor always has one (operations.ts)
    lo = '(' .. orderKey(tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tag) .. '\255'
  end
  if AGING == 0 and maxP then
    local b = string.format('%08x', 2147483647 - maxP)
    if lo == '-' or b > string.sub(lo, 2) then lo = '[' .. b end
  end
  if AGING == 0 and minP and minP > -2147483648 then hi = '(' .. string.format('%08x', 2147483647 - minP + 1) end
  -- a min-heap of lane fronts: { members, position, lane key }
  local heap = {}
  local function less(a, b) return a[1][a[2]] < b[1][b[2]] end
  local function push(e)
    local i = #heap + 1
    heap[i] = e
    while i > 1 do
      local p = math.floor(i / 2)
      if not less(heap[i], heap[p]) then break end
      heap[i], heap[p] = heap[p], heap[i]
      i = p
    end
  end
  local function popTop()
    local n = #heap
    heap[1] = heap[n]
    heap[n] = nil
    n = n - 1
    local i = 1
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= n and less(heap[l], heap[m]) then m = l end
      if r <= n and less(heap[r], heap[m]) then m = r end
      if m == i then break end
      heap[i], heap[m] = heap[m], heap[i]
      i = m
    end
  end
  for _, lane in ipairs(laneIds()) do
    local keys = cjson.decode(lane) -- core/admission.ts laneKey: [providerKey, accountId, tenantId, concurrencyKey]
    if (not fProvider or keys[1] == fProvider) and (not fAccount or keys[2] == fAccount) and (not fTenant or keys[3] == fTenant) then
      local lk = dk('lane', lane)
      local ms = redis.call('ZRANGE', lk, lo, hi, 'BYLEX', 'LIMIT', '0', '8')
      if #ms > 0 then push({ ms, 1, lk }) end
    end
  end
  local last = nil
  while #heap > 0 and #out < want and read < budget do
    local e = heap[1]
    local member = e[1][e[2]]
    if e[2] < #e[1] then
      e[2] = e[2] + 1
      popTop()
      push(e)
    else
      popTop()
      local ms = redis.call('ZRANGE', e[3], '(' .. member, hi, 'BYLEX', 'LIMIT', '0', '64')
      if #ms > 0 then push({ ms, 1, e[3] }) end
    end
    read = read + 1
    last = member
    local id = string.sub(member, KEYW + 1)
    if passes(id, true, priOf(member)) then take(id) end
  end
  if #out < want and read >= budget and #heap > 0 then
    local f = redis.call('HMGET', dk('task', string.sub(last, KEYW + 1)), 'priority', 'runAt', 'createdAt', 'seq', 'fairTag')
    return { NOWS, out, { 'd', f[1], f[2], f[3], f[4], f[5] } }
  end
end

-- not yet due: the delayed set by runAt, each group of one runAt by seq
if #out < want and read < budget then
  local afterRun, afterSeq = NOW, nil
  if phase == 'l' then
    afterRun, afterSeq = math.max(NOW, tonumber(ARGV[8])), tonumber(ARGV[9])
    if afterRun > tonumber(ARGV[8]) then afterSeq = nil end
  end
  local lastRun, lastSeq = nil, nil
  local from = '(' .. fmt(afterRun)
  if afterSeq then from = fmt(afterRun) end
  while #out < want and read < budget do
    local first = redis.call('ZRANGEBYSCORE', K.delayed, from, '+inf', 'WITHSCORES', 'LIMIT', '0', '1')
    if #first == 0 then break end
    local runAt = first[2]
    local group = {}
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', K.delayed, runAt, runAt)) do
      group[#group + 1] = { tonumber(redis.call('HGET', dk('task', id), 'seq')), id }
    end
    table.sort(group, function(a, b) return a[1] < b[1] end)
    local r = tonumber(runAt)
    for _, g in ipairs(group) do
      if #out >= want or read >= budget then break end
      if not (afterSeq and r == afterRun and g[1] <= afterSeq) then
        read = read + 1
        lastRun, lastSeq = runAt, g[1]
        if passes(g[2], false, nil) then take(g[2]) end
      end
    end
    from = '(' .. runAt
  end
  if #out < want and read >= budget and lastRun then
    stop = { 'l', lastRun, fmt(lastSeq) }
  end
end
wake()
return { NOWS, out, stop }
