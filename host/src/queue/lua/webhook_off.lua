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
end_pending(P, wh, ts, 'cancelled')
redis.call('DEL', key, key .. ':dlvs')
redis.call('ZREM', P .. ':org:' .. org .. ':webhooks', wh)
return 1
