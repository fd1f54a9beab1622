-- Ends listed pending deliveries of a webhook in one partition: 'failed' when it was
-- deactivated (retriable after reactivation), 'cancelled' when it was deleted. The caller
-- moves its new deliveries to its sorted queue (`drain_new.lua`), lists the queue's
-- members and calls again until the queue is empty.
-- KEYS: 1 ready, 2 the webhook's queue, 3 deliveries ended awaiting their move to
--       history, then per listed delivery: its row
-- ARGV: 1 now (ms), 2 the status to give, 3 webhook id, 4 '1' when history is kept in
--       PostgreSQL, then per delivery: its queue member
-- Returns how many members are left in the webhook's queue.
local ready, queue, ended, now, status, wh = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3]
local history = ARGV[4] == '1'
for i = 4, #KEYS do
  local dkey, member = KEYS[i], ARGV[i + 1]
  local f = redis.call('HMGET', dkey, 'o', 's')
  if f[1] and not f[2] then
    redis.call('HSET', dkey, 's', status, 'q', '', 'u', now)
    if history then redis.call('ZADD', ended, now, string.sub(member, 1, string.find(member, ' ', 1, true) - 1)) end
  end
  redis.call('ZREM', queue, member)
end
local left = redis.call('ZCARD', queue)
if left == 0 then redis.call('ZREM', ready, wh) end
return left
