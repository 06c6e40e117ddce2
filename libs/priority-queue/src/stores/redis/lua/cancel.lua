-- cancel: PENDING_SUBMIT -> CANCELED at once. SUBMITTING / SUBMITTED / RUNNING: cancelRequested
-- set (version + 1); a leaseless SUBMITTED / RUNNING task becomes due for a poll now, so a
-- worker finalises it. Terminal: unchanged.
-- KEYS: [1] the seq key, for routing only (see lib.lua); keys used: delayed, ready, laneready, lanepark, pendcount, polls, deadlines, finished
-- ARGV[4] id
-- Returns: the task after the change (HGETALL), or nil when it does not exist
local id = ARGV[4]
local tk = dk('task', id)
local st = redis.call('HGET', tk, 'status')
if not st then return false end
if st == PENDING then
  finalize(id, 'CANCELED')
elseif INFLIGHT[st] then
  redis.call('HSET', tk, 'cancelRequested', '1', 'updatedAt', NOWS)
  redis.call('HINCRBY', tk, 'version', '1')
  if redis.call('ZSCORE', K.polls, id) then
    schedulePoll(id)
    WOKE = true
  end
end
wake()
return taskOf(id)
