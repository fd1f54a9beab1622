-- Shared helpers, prepended to the scripts that need them.

-- Ends every pending delivery of a webhook with `status`: 'failed' when it was deactivated
-- (they stay retriable by hand once it is active again), 'cancelled' when it was deleted.
-- Clears its queues.
local function end_pending(P, wh, ts, status)
  local pending = P .. ':wh:' .. wh .. ':pending'
  for _, dlv in ipairs(redis.call('SMEMBERS', pending)) do
    local key = P .. ':dlv:' .. dlv
    if redis.call('HGET', key, 'status') == 'pending' then
      redis.call('HSET', key, 'status', status, 'next_attempt_at', '', 'updated_at', ts)
    end
    redis.call('ZREM', P .. ':q:scheduled', dlv)
  end
  redis.call('DEL', pending)
  redis.call('DEL', P .. ':q:parked:' .. wh)
  redis.call('SREM', P .. ':q:parked', wh)
end

-- Marks a webhook inactive with a reason, unless it already is; fails its pending deliveries.
local function deactivate(P, wh, ts, reason)
  local key = P .. ':wh:' .. wh
  if redis.call('HGET', key, 'active') ~= '1' then return false end
  redis.call('HSET', key, 'active', '0', 'deactivated_at', ts, 'deactivation_reason', reason, 'updated_at', ts)
  end_pending(P, wh, ts, 'failed')
  return true
end
