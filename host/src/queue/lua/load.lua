-- A worker takes a delivery for one attempt: reads what the attempt needs of it, of its
-- webhook and (unless a plugin already rendered a body) of the event, and leases it so no
-- other worker sends it at the same time.
-- KEYS: 1 delivery. ARGV: 1 prefix, 2 now (ms), 3 lease until (ms)
-- Returns {'missing'} | {'done', status} | {'busy'} | {'ok', delivery, webhook, envelope|false}
-- where delivery = status, lease_until, webhook_id, org_id, event_id, attempt_count,
-- attempt_budget, event_created_at, body, headers, plugins (false when absent) and
-- webhook = active, url, signing_secret, plugins, fail_count (all false when it is gone).
local P = ARGV[1]
local d = redis.call('HMGET', KEYS[1], 'status', 'lease_until', 'webhook_id', 'org_id', 'event_id',
  'attempt_count', 'attempt_budget', 'event_created_at', 'body', 'headers', 'plugins')
if not d[1] then return {'missing'} end
if d[1] ~= 'pending' then return {'done', d[1]} end
local lease = tonumber(d[2] or '')
if lease and lease > tonumber(ARGV[2]) then return {'busy'} end
redis.call('HSET', KEYS[1], 'lease_until', ARGV[3])
local w = redis.call('HMGET', P .. ':wh:' .. d[3], 'active', 'url', 'signing_secret', 'plugins', 'fail_count')
local body = false
if not d[9] or d[9] == '' then
  body = redis.call('GET', P .. ':evt:' .. d[4] .. ':' .. d[5])
end
return {'ok', d, w, body}
