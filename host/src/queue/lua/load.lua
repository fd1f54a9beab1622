-- Workers take deliveries for one attempt each: reads what the attempt needs of each, of
-- its webhook and (unless a plugin already rendered a body) of the event, leases it so
-- no other worker sends it at the same time, and counts the attempt (attempt_count is
-- returned already counted). Many deliveries per call (group commit).
-- KEYS: the deliveries. ARGV: 1 prefix, 2 now (ms), 3 lease until (ms)
-- Returns one reply per delivery:
-- {'missing'} | {'done', status} | {'busy'} | {'ok', delivery, webhook, envelope} | {'error', message}
-- where delivery = status, lease_until, webhook_id, org_id, event_id, attempt_count,
-- attempt_budget, event_created_at, body, headers, plugins (false when absent),
-- webhook = active, url, signing_secret, plugins, fail_count (all false when it is gone), and
-- envelope = the event's JSON, false (not needed, or expired), or the position (1-based) of an
-- earlier reply carrying the same event: in a fan-out most of a batch shares a few events and
-- webhooks, so each is read and sent once per call.
local P, now, lease_until = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local webhooks, events = {}, {}

local function load(key, i)
  local d = redis.call('HMGET', key, 'status', 'lease_until', 'webhook_id', 'org_id', 'event_id',
    'attempt_count', 'attempt_budget', 'event_created_at', 'body', 'headers', 'plugins')
  if not d[1] then return {'missing'} end
  if d[1] ~= 'pending' then return {'done', d[1]} end
  local lease = tonumber(d[2] or '')
  if lease and lease > now then return {'busy'} end
  -- The attempt counts from the moment it starts: one made again after a crash is a new one.
  d[6] = tostring((tonumber(d[6] or '') or 0) + 1)
  redis.call('HSET', key, 'lease_until', lease_until, 'attempt_count', d[6])
  local w = webhooks[d[3]]
  if not w then
    w = redis.call('HMGET', P .. ':wh:' .. d[3], 'active', 'url', 'signing_secret', 'plugins', 'fail_count')
    webhooks[d[3]] = w
  end
  local body = false
  if not d[9] or d[9] == '' then
    local event = d[4] .. ':' .. d[5]
    body = events[event]
    if not body then
      body = redis.call('GET', P .. ':evt:' .. event)
      if body then events[event] = i end
    end
  end
  return {'ok', d, w, body}
end

-- One bad record fails only its own reply.
local replies = {}
for i, key in ipairs(KEYS) do
  local ok, reply = pcall(load, key, i)
  if ok then
    replies[i] = reply
  else
    replies[i] = {'error', type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
return replies
