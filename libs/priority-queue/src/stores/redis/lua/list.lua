-- list: tasks of one status, oldest seq first, after seq `afterSeq` (exclusive).
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: status:<status>, task:<id>
-- ARGV[4] status, ARGV[5] afterSeq ('' = from the start), ARGV[6] limit
-- Returns: the tasks (HGETALL each)
local min = '-inf'
if ARGV[5] ~= '' then min = '(' .. ARGV[5] end
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', dk('status', ARGV[4]), min, '+inf', 'LIMIT', 0, tonumber(ARGV[6]))) do
  out[#out + 1] = taskOf(id)
end
return out
