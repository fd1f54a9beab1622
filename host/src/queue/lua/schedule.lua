-- Moves deliveries whose retry is due from the scheduled zset to the ready stream.
-- KEYS: 1 scheduled zset, 2 ready stream. ARGV: 1 prefix, 2 now (ms), 3 most to move
-- Returns {moved, score of the next due delivery or -1}.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, dlv in ipairs(due) do
  redis.call('ZREM', KEYS[1], dlv)
  local wh = redis.call('HGET', ARGV[1] .. ':dlv:' .. dlv, 'webhook_id')
  if wh then redis.call('XADD', KEYS[2], '*', 'd', dlv, 'w', wh) end
end
local next_due = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {#due, tonumber(next_due[2] or '-1')}
