-- set_limits: applies one limit change atomically. Every parked lane goes back to ready (room
-- may have been freed; lanes still blocked park again at the next claim) and a wake is published;
-- a tenant weight (fair share) only changes the tags of tasks created after it: nothing else.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: providers, lim_a, lim_t, lim_c, lim_meta, lim_w, ratewake,
--       parkedres, lanepark, laneready, ready
-- ARGV[4] kind: 'provider' | 'account' | 'tenant' | 'defaultTenant' | 'concurrencyKey'
--   provider:       ARGV[5] providerKey, then paused, qps, burst, accountConcurrency
--   account:        ARGV[5] providerKey, ARGV[6] accountId, ARGV[7] concurrency
--   tenant:         ARGV[5] tenantId, ARGV[6] quota
--   defaultTenant:  ARGV[5] quota
--   concurrencyKey: ARGV[5] key, ARGV[6] limit
--   tenantWeight:   ARGV[5] tenantId, ARGV[6] weight (1..1000, validated by the caller)
--   each value optional ('' = remove the limit, '~' = unchanged, '+' .. value = set)
-- Returns: 1
local function put(key, field, v)
  if v == '~' then return end
  local x = opt(v)
  if x then redis.call('HSET', key, field, x) else redis.call('HDEL', key, field) end
end
local kind = ARGV[4]
if kind == 'provider' then
  local pk = dk('provider', ARGV[5])
  redis.call('SADD', K.providers, ARGV[5])
  put(pk, 'paused', ARGV[6])
  put(pk, 'qps', ARGV[7])
  put(pk, 'burst', ARGV[8])
  put(pk, 'accountConcurrency', ARGV[9])
  redis.call('HSETNX', pk, 'paused', '0')
elseif kind == 'account' then
  put(K.lim_a, ARGV[5] .. SEP .. ARGV[6], ARGV[7])
elseif kind == 'tenant' then
  put(K.lim_t, ARGV[5], ARGV[6])
elseif kind == 'defaultTenant' then
  put(K.lim_meta, 'defaultTenantQuota', ARGV[5])
elseif kind == 'concurrencyKey' then
  put(K.lim_c, ARGV[5], ARGV[6])
elseif kind == 'tenantWeight' then
  put(K.lim_w, ARGV[5], ARGV[6])
  return 1
else
  fail('PQ_KIND ' .. tostring(kind))
end
unparkAll()
WOKE = true
wake()
return 1
