-- Removes the delivery rows listed at the head of a day's index of an organisation (the
-- day is past the retention period): a final row goes at once; one still pending (a
-- manual retry, a long Retry-After) gets the retention period as its TTL instead, so it is
-- neither lost while it waits nor kept for ever. The listed ids leave the index.
-- KEYS: 1 the day's index, then the listed deliveries' rows
-- ARGV: 1 retention (ms)
-- Returns how many ids are left in the index.
local index, retention = KEYS[1], ARGV[1]
for i = 2, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'o', 's')
  if f[1] and not f[2] then
    if redis.call('PTTL', KEYS[i]) == -1 then redis.call('PEXPIRE', KEYS[i], retention) end
  else
    redis.call('DEL', KEYS[i])
  end
end
redis.call('LTRIM', index, #KEYS - 1, -1)
return redis.call('LLEN', index)
