-- list: tasks of one status, oldest seq first, after seq `afterSeq` (exclusive).
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: status:<status>, task:<id>,
--       leases (SUBMITTING, which has no status set: O(leases))
-- ARGV[4] status, ARGV[5] afterSeq ('' = from the start), ARGV[6] limit
-- Returns: the tasks (HGETALL each)
local limit = tonumber(ARGV[6])
local out = {}
if ARGV[4] == SUBMITTING then
  local after = tonumber(ARGV[5])
  for _, t in ipairs(submittingTasks()) do
    if #out >= limit then break end
    if not after or t[1] > after then out[#out + 1] = taskOf(t[2]) end
  end
  return out
end
local min = '-inf'
if ARGV[5] ~= '' then min = '(' .. ARGV[5] end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', dk('status', ARGV[4]), min, '+inf', 'LIMIT', '0', limit)) do
  out[#out + 1] = taskOf(id)
end
return out
