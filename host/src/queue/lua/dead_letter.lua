-- Takes a delivery whose record cannot be read out of the queue for good: it becomes
-- `failed` with `error` saying why, leaves its webhook's pending set and the retry
-- schedule, and its stream entry is acknowledged. A key that is no longer a hash is
-- replaced by a minimal record (attributed to its webhook's organisation) so that the
-- deliveries API can show what happened; JSON fields that cannot be parsed are dropped.
-- KEYS: 1 ready stream, 2 scheduled zset, 3 the delivery, 4 its webhook, 5 the webhook's
--       pending set
-- ARGV: 1 group, 2 entry id ('' if none), 3 delivery id, 4 webhook id, 5 now (RFC 3339),
--       6 reason, 7 retention (ms)
local key = KEYS[3]
local function kind(k) return redis.call('TYPE', k)['ok'] end
if kind(key) ~= 'hash' then
  redis.call('DEL', key)
  local org = kind(KEYS[4]) == 'hash' and redis.call('HGET', KEYS[4], 'org_id')
  if org then
    redis.call('HSET', key, 'id', ARGV[3], 'org_id', org, 'webhook_id', ARGV[4], 'event_id', '', 'action', '',
      'created_at', ARGV[5])
  end
end
if redis.call('EXISTS', key) == 1 then
  for _, field in ipairs({'attempts', 'plugins', 'headers'}) do
    local v = redis.call('HGET', key, field)
    if v and v ~= '' and not pcall(cjson.decode, v) then redis.call('HDEL', key, field) end
  end
  redis.call('HSET', key, 'status', 'failed', 'error', ARGV[6], 'next_attempt_at', '', 'updated_at', ARGV[5],
    'lease_until', '')
  redis.call('PEXPIRE', key, ARGV[7])
end
if kind(KEYS[5]) == 'set' then redis.call('SREM', KEYS[5], ARGV[3]) end
redis.call('ZREM', KEYS[2], ARGV[3])
if ARGV[2] ~= '' then redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) end
return 1
