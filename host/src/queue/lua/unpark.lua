-- Moves up to ARGV[2] parked deliveries of a webhook back onto the ready stream.
-- KEYS: 1 parked list, 2 set of webhooks with parked work, 3 ready stream. ARGV: 1 webhook, 2 count
-- Returns how many moved; the webhook leaves the set when its list is empty.
local moved = 0
for _ = 1, tonumber(ARGV[2]) do
  local dlv = redis.call('LPOP', KEYS[1])
  if not dlv then break end
  redis.call('XADD', KEYS[3], '*', 'd', dlv, 'w', ARGV[1])
  moved = moved + 1
end
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return moved
