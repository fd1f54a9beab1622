-- A worker takes a delivery for one attempt: reads it, its webhook and (unless a plugin
-- already rendered a body) the event envelope, and leases it so no other worker sends it
-- at the same time.
-- KEYS: 1 delivery. ARGV: 1 prefix, 2 now (ms), 3 lease until (ms)
-- Returns {'missing'} | {'done', status} | {'busy'} | {'ok', delivery fields, webhook fields, envelope|false}
local P = ARGV[1]
local d = redis.call('HGETALL', KEYS[1])
if #d == 0 then return {'missing'} end
local f = {}
for i = 1, #d, 2 do f[d[i]] = d[i + 1] end
if f['status'] ~= 'pending' then return {'done', f['status']} end
local lease = tonumber(f['lease_until'] or '')
if lease and lease > tonumber(ARGV[2]) then return {'busy'} end
redis.call('HSET', KEYS[1], 'lease_until', ARGV[3])
local w = redis.call('HGETALL', P .. ':wh:' .. f['webhook_id'])
local body = false
if (f['body'] or '') == '' then
  body = redis.call('GET', P .. ':evt:' .. f['org_id'] .. ':' .. f['event_id'])
end
return {'ok', d, w, body}
