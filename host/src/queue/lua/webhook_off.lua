-- A webhook stops: deleted (its pending deliveries are cancelled and it is removed) or
-- deactivated by hand (its pending deliveries fail, retriable after reactivation).
-- ARGV: 1 prefix, 2 org, 3 webhook, 4 now (RFC 3339), 5 'delete' | 'deactivate'
-- Returns 0 when the webhook is not the organisation's, else 1.
local P, org, wh, ts, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = P .. ':wh:' .. wh
if redis.call('HGET', key, 'org_id') ~= org then return 0 end
if mode == 'deactivate' then
  deactivate(P, wh, ts, 'manual')
  return 1
end
local pending = key .. ':pending'
for _, dlv in ipairs(redis.call('SMEMBERS', pending)) do
  local dkey = P .. ':dlv:' .. dlv
  if redis.call('HGET', dkey, 'status') == 'pending' then
    redis.call('HSET', dkey, 'status', 'cancelled', 'next_attempt_at', '', 'updated_at', ts)
  end
  redis.call('ZREM', P .. ':q:scheduled', dlv)
end
redis.call('DEL', key, pending, key .. ':dlvs', P .. ':q:parked:' .. wh)
redis.call('SREM', P .. ':q:parked', wh)
redis.call('ZREM', P .. ':org:' .. org .. ':webhooks', wh)
return 1
