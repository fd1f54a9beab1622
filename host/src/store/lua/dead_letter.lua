-- Takes a delivery whose row cannot be read out of the queue for good: it becomes
-- `failed` with `r` (the reason), and leaves its webhook's queue. A key that is no longer
-- a hash is replaced by a minimal row, so the deliveries API can show what happened;
-- JSON fields that cannot be parsed are dropped.
-- KEYS: 1 the delivery, 2 its webhook's queue
-- ARGV: 1 queue member, 2 now (ms), 3 reason, 4 organisation, 5 webhook id
local dkey, queue = KEYS[1], KEYS[2]
if redis.call('TYPE', dkey)['ok'] ~= 'hash' then
  redis.call('DEL', dkey)
  redis.call('HSET', dkey, 'o', ARGV[4], 'w', ARGV[5], 'e', '', 'a', '')
end
for _, field in ipairs({'x', 'p', 'h'}) do
  local v = redis.call('HGET', dkey, field)
  if v and v ~= '' and not pcall(cjson.decode, v) then redis.call('HDEL', dkey, field) end
end
redis.call('HSET', dkey, 's', 'failed', 'r', ARGV[3], 'q', '', 'u', ARGV[2])
redis.call('ZREM', queue, ARGV[1])
return 1
