-- Takes a delivery whose row cannot be read out of the queue for good: it becomes
-- `failed` with `r` (the reason), and leaves its webhook's queue. A key that is no longer
-- a hash is replaced by a minimal row, so the deliveries API can show what happened;
-- JSON fields that cannot be parsed are dropped.
-- An ordered delivery (its row has `z`) releases its subject's next (`order.lua`).
-- KEYS: 1 the delivery, 2 its webhook's queue, 3 its webhook's heads, 4 held deliveries,
--       5 list of new deliveries, 6 the partition's ready webhooks, 7 deliveries ended
--       awaiting their move to history
-- ARGV: 1 queue member, 2 now (ms), 3 reason, 4 organisation, 5 webhook id, 6 '1' when
--       history is kept in PostgreSQL
local dkey, queue = KEYS[1], KEYS[2]
local subject = redis.call('TYPE', dkey)['ok'] == 'hash' and redis.call('HGET', dkey, 'z')
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
if ARGV[6] == '1' then redis.call('ZADD', KEYS[7], ARGV[2], string.sub(ARGV[1], 1, string.find(ARGV[1], ' ', 1, true) - 1)) end
if subject then
  local dlv = string.sub(ARGV[1], 1, string.find(ARGV[1], ' ', 1, true) - 1)
  order_release(KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[2], ARGV[5], subject, dlv)
end
return 1
