-- get_limits: a consistent snapshot of every limit.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: providers, lim_a, lim_t, lim_c, lim_meta, lim_w
-- ARGV: common (1-3) only
-- Returns: { { providerKey, HGETALL of its limits, ... }, HGETALL lim_a, HGETALL lim_t,
--            defaultTenantQuota or nil, HGETALL lim_c, HGETALL lim_w } (lib.lua limitsSnapshot)
return limitsSnapshot()
