-- get_limits: a consistent snapshot of every limit.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: providers, lim_a, lim_t, lim_c, lim_meta
-- ARGV: common (1-3) only
-- Returns: { { providerKey, HGETALL of its limits, ... }, HGETALL lim_a, HGETALL lim_t,
--            defaultTenantQuota or nil, HGETALL lim_c }
local providers = {}
for _, p in ipairs(redis.call('SMEMBERS', K.providers)) do
  providers[#providers + 1] = p
  providers[#providers + 1] = redis.call('HGETALL', dk('provider', p))
end
return { providers, redis.call('HGETALL', K.lim_a), redis.call('HGETALL', K.lim_t),
  redis.call('HGET', K.lim_meta, 'defaultTenantQuota'), redis.call('HGETALL', K.lim_c) }
