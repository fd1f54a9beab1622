-- A webhook stops receiving events: deleted, or deactivated (by hand, after failures, or
-- on 410 Gone). Its queued deliveries are ended by the caller, partition by partition.
-- A deleted webhook is remembered in the organisation's deleted set (by the time, in ms) for
-- the delivery retention, so its deliveries stay listable by its id.
-- KEYS: 1 the webhook, 2 the organisation's webhooks, 3 the organisation's deleted webhooks,
--       then per action of the catalogue and per source of the organisation: its
--       subscribers set, then the organisation's filters
-- ARGV: 1 organisation, 2 webhook id, 3 now (RFC 3339), 4 'delete' | 'deactivate', 5 the
--       deactivation reason, 6 now (ms), 7 the delivery retention (ms)
-- Returns 0 when the webhook is not the organisation's (or, to deactivate, already
-- inactive), else 1.
local key, index, org, wh, ts, mode, reason = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if redis.call('HGET', key, 'org_id') ~= org then return 0 end
if mode == 'deactivate' then
  if redis.call('HGET', key, 'active') ~= '1' then return 0 end
  redis.call('HSET', key, 'active', '0', 'deactivated_at', ts, 'deactivation_reason', reason, 'updated_at', ts)
else
  redis.call('DEL', key)
  redis.call('ZREM', index, wh)
  local now = tonumber(ARGV[6])
  redis.call('ZADD', KEYS[3], now, wh)
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. (now - tonumber(ARGV[7])))
end
for i = 4, #KEYS - 1 do redis.call('SREM', KEYS[i], wh, wh .. ' subject') end
redis.call('HDEL', KEYS[#KEYS], wh)
return 1
