-- Forgets events written to history (`store::events::accepted`): an event leaves Redis,
-- and the partition's accepted set, only when none of its deliveries has a row here any
-- more (each of them ended and moved, or never was): a live delivery still needs it. One
-- that must stay is noted again for later (by `ARGV[1]`).
-- KEYS: 1 the partition's accepted events, then per event: 1 the event, then its
--       deliveries' rows (as many as ARGV says)
-- ARGV: 1 when to look again at an event that stays (ms), then per event: how many rows
--       follow its key
-- Returns how many events were deleted.
local accepted, later = KEYS[1], ARGV[1]
local k, deleted = 2, 0
for a = 2, #ARGV do
  local ekey, n = KEYS[k], tonumber(ARGV[a])
  local needed = false
  for i = 1, n do
    if redis.call('EXISTS', KEYS[k + i]) == 1 then
      needed = true
      break
    end
  end
  if needed then
    redis.call('ZADD', accepted, later, ekey)
  else
    redis.call('DEL', ekey)
    redis.call('ZREM', accepted, ekey)
    deleted = deleted + 1
  end
  k = k + 1 + n
end
return deleted
