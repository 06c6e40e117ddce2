-- time: the store clock as every script of this queue reads it (lib.lua NOW): the TIME of the
-- node serving the queue's slot (a Redis Cluster client routes the call by KEYS[1], where a bare
-- TIME would go to any node), or ARGV[2] when the caller injects a clock.
-- KEYS: [1] the seq key, for routing only (see lib.lua); no key used
-- ARGV: common (1-3) only
-- Returns: now in epoch ms (an integer)
return NOW
