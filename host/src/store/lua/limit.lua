-- A webhook's delivery rate (`rate_limit`): takes up to n deliveries from its budget, or
-- gives unused ones back. GCRA on Redis's clock, shared by every process and partition: the
-- key holds the theoretical arrival time (µs); each delivery taken moves it one interval
-- later, and deliveries are taken while it stays within `burst` intervals of now.
-- KEYS: 1 the webhook's limiter
-- ARGV: 1 interval (µs), 2 burst (deliveries), 3 'take' | 'give', 4 how many
-- Returns {'granted', deliveries taken (0 when giving back), 'wait', µs until as many as
-- asked for (up to half a burst, at least one) could be taken (0 when that many were
-- granted)}: a caller that waits that long takes a batch, not one delivery at a time, and
-- comes back while the budget still has room to fill — had it waited for a whole burst, the
-- budget would be full as it came back, and every moment it came back late would be rate lost
-- (a webhook at 1,000/s got 982/s when its claims asked for more than a burst).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, burst, mode, n = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
-- More than a burst is never there to take: asking for more is asking for a burst (and a
-- full budget answers it without a wait).
if mode ~= 'give' then n = math.min(n, burst) end
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
-- A grant of half a burst or more is a batch already: no wait, even if fewer than asked for
-- (a claim that finds fewer deliveries gives the rest back, so waiting on them would hold
-- back a webhook whose budget is barely touched).
local batch = math.max(1, math.min(n, math.floor(burst / 2)))
local wait = 0
if mode ~= 'give' and granted < batch then
  wait = math.max(1, tat + batch * interval - burst * interval - now)
end
return {'granted', granted, 'wait', wait}
