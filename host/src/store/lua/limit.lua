-- A webhook's delivery rate (`rate_limit`): takes up to n deliveries from its budget, or
-- gives unused ones back. GCRA on Redis's clock, shared by every process and partition: the
-- key holds the theoretical arrival time (µs); each delivery taken moves it one interval
-- later, and deliveries are taken while it stays within `burst` intervals of now.
-- KEYS: 1 the webhook's limiter
-- ARGV: 1 interval (µs), 2 burst (deliveries), 3 'take' | 'give', 4 how many
-- Returns {'granted', deliveries taken (0 when giving back), 'wait', µs until as many as
-- asked for (up to a burst) could be taken (0 when all asked for were granted)}: a caller
-- that waits that long takes a batch, not one delivery at a time.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, burst, mode, n = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '') or now
if tat < now then tat = now end
local granted = 0
if mode == 'give' then
  tat = math.max(now, tat - n * interval)
else
  local room = math.floor((now + burst * interval - tat) / interval)
  granted = math.max(0, math.min(n, room))
  tat = tat + granted * interval
end
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
local wait = 0
if mode ~= 'give' and granted < n then
  wait = math.max(1, tat + math.min(n, burst) * interval - burst * interval - now)
end
return {'granted', granted, 'wait', wait}
