-- Takes one request from a client's budget (GCRA, on Redis's clock shared by every process).
-- KEYS: 1 the client's key. ARGV: 1 interval (µs), 2 burst (requests).
-- Returns 0 when allowed, else the wait (µs) until the next request would be.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '') or now
if tat < now then tat = now end
local next_tat = tat + interval
local wait = next_tat - burst * interval - now
if wait > 0 then return wait end
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.ceil((next_tat - now) / 1000) + 1)
return 0
