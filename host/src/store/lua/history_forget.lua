-- Forgets delivery rows written to history (`store::queue::ended`): each row is deleted,
-- and leaves the partition's ended set, only if it is still as the mover read it (its
-- field count, status, latest attempt and last change); a row retried meanwhile stays —
-- and leaves the set while it is live again (it is noted again when it ends). A row gone
-- already just leaves the set.
-- KEYS: 1 the partition's ended deliveries, then per row: the row
-- ARGV: per row: 1 its delivery id, 2 its stamp as read (`count|s|l|u`)
-- Returns how many rows were deleted.
local ended = KEYS[1]
local deleted = 0
for i = 2, #KEYS do
  local dkey, id, stamp = KEYS[i], ARGV[2 * i - 3], ARGV[2 * i - 2]
  local n = redis.call('HLEN', dkey)
  if n == 0 then
    redis.call('ZREM', ended, id)
  else
    local f = redis.call('HMGET', dkey, 's', 'l', 'u')
    local now = n .. '|' .. (f[1] or '') .. '|' .. (f[2] or '') .. '|' .. (f[3] or '')
    if now == stamp then
      redis.call('DEL', dkey)
      redis.call('ZREM', ended, id)
      deleted = deleted + 1
    elseif not f[1] or f[1] == '' then
      redis.call('ZREM', ended, id)
    end
  end
end
return deleted
