-- Moves up to ARGV[2] of a webhook's new deliveries — and then of its deliveries held
-- behind their subject's head (`order.lua`) — to its sorted queue, due at ARGV[1], so that
-- ending a webhook's deliveries (`end_pending.lua`) finds them all in one place. Once
-- nothing is held, its heads go too (no subject waits on anything any more).
-- KEYS: 1 its list of new deliveries, 2 its sorted queue, 3 its heads, 4 its held deliveries
-- Returns how many moved.
local limit = tonumber(ARGV[2])
local moved = redis.call('LPOP', KEYS[1], limit) or {}
if #moved < limit then
  local held = redis.call('ZRANGE', KEYS[4], 0, limit - #moved - 1)
  if #held > 0 then redis.call('ZREM', KEYS[4], unpack(held)) end
  for _, entry in ipairs(held) do
    -- subject NUL number NUL member: the member follows the second NUL.
    local first = string.find(entry, '\0', 1, true)
    moved[#moved + 1] = string.sub(entry, string.find(entry, '\0', first + 1, true) + 1)
  end
  if redis.call('EXISTS', KEYS[4]) == 0 then redis.call('DEL', KEYS[3]) end
end
if #moved == 0 then return 0 end
local args = {}
for i, member in ipairs(moved) do
  args[2 * i - 1] = ARGV[1]
  args[2 * i] = member
end
redis.call('ZADD', KEYS[2], unpack(args))
return #moved
