-- An organisation's events of one UTC day (contract §9 "Plans"): takes the places of the
-- publishes of one batch, each all or nothing, in order, while they fit the plan's limit.
-- KEYS: 1 the organisation's counter of the day
-- ARGV: 1 the limit ('give' to give places back), 2 when the counter expires
--       (ms since the epoch: a day after its own ends), then each publish's number of events
-- Returns per publish: {1, count after it} when taken, {0, count} when refused (nothing
-- when giving back: a counter gone is not made again).
if ARGV[1] == 'give' then
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECRBY', KEYS[1], ARGV[3]) end
  return {}
end
local limit = tonumber(ARGV[1])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local replies, taken = {}, 0
for i = 3, #ARGV do
  local n = tonumber(ARGV[i])
  if used + n > limit then
    replies[#replies + 1] = {0, used}
  else
    used = used + n
    taken = taken + n
    replies[#replies + 1] = {1, used}
  end
end
if taken > 0 then
  redis.call('INCRBY', KEYS[1], taken)
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
end
return replies
