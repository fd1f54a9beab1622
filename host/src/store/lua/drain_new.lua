-- Moves up to ARGV[2] of a webhook's new deliveries to its sorted queue, due at ARGV[1],
-- so that ending a webhook's deliveries (`end_pending.lua`) finds them all in one place.
-- KEYS: 1 its list of new deliveries, 2 its sorted queue.
-- Returns how many moved.
local moved = redis.call('LPOP', KEYS[1], tonumber(ARGV[2]))
if not moved then return 0 end
local args = {}
for i, member in ipairs(moved) do
  args[2 * i - 1] = ARGV[1]
  args[2 * i] = member
end
redis.call('ZADD', KEYS[2], unpack(args))
return #moved
