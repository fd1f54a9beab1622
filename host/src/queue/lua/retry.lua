-- Queues one more attempt of deliveries (manual retry, bulk retry of failed ones).
-- KEYS: 1 ready stream, 2 scheduled zset.
-- ARGV: 1 prefix, 2 org, 3 now (RFC 3339), 4 'any' (one delivery: also succeeded and
--       pending ones) or 'failed' (bulk: failed ones only), 5 retention (ms), then delivery ids
-- Returns {queued, reason of the last refusal or ''}; reasons: not_found, webhook_gone,
-- inactive, filtered.
local P, org, ts, mode, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local queued, refusal = 0, ''
for i = 6, #ARGV do
  local dlv = ARGV[i]
  local key = P .. ':dlv:' .. dlv
  local f = redis.call('HMGET', key, 'org_id', 'status', 'webhook_id', 'attempt_count', 'event_id')
  local status, wh = f[2], f[3]
  local whkey = P .. ':wh:' .. (wh or '')
  if f[1] ~= org then
    refusal = 'not_found'
  elseif mode == 'failed' and status ~= 'failed' then
    -- bulk retry skips the rest
  elseif redis.call('EXISTS', whkey) == 0 or status == 'cancelled' then
    refusal = 'webhook_gone'
  elseif redis.call('HGET', whkey, 'active') ~= '1' then
    refusal = 'inactive'
  elseif status == 'filtered' then
    refusal = 'filtered'
  elseif status == 'pending' then
    if redis.call('ZREM', KEYS[2], dlv) == 1 then
      redis.call('XADD', KEYS[1], '*', 'd', dlv, 'w', wh)
      redis.call('HSET', key, 'next_attempt_at', ts)
    end
    queued = queued + 1
  else
    redis.call('HSET', key, 'status', 'pending', 'next_attempt_at', ts, 'updated_at', ts,
      'attempt_budget', tostring(tonumber(f[4] or '0') + 1))
    redis.call('SADD', whkey .. ':pending', dlv)
    redis.call('XADD', KEYS[1], '*', 'd', dlv, 'w', wh)
    -- The record and its event must outlive this new attempt.
    redis.call('PEXPIRE', key, ttl)
    local ekey = P .. ':evt:' .. org .. ':' .. f[5]
    if redis.call('PTTL', ekey) > 0 then redis.call('PEXPIRE', ekey, ttl) end
    queued = queued + 1
  end
end
return {queued, refusal}
