-- Creates or changes a webhook, and its place in the subscription index, in one step.
-- KEYS: 1 the webhook, 2 the organisation's webhooks, then per attached plugin: its hash,
--       then per action of the catalogue and per source of the organisation: its
--       subscribers set, then the organisation's filters (hash: webhook → its filter, while it is active and has one)
-- ARGV: 1 'create' | 'update', 2 organisation, 3 webhook id, 4 most webhooks per
--       organisation, 5 number of attached plugins, 6 number of actions and sources, then their
--       names (in the order of their sets), then field, value pairs to set
-- Returns 'saved', 'reactivated' (update: saved, and it set 'active' on a webhook that was
-- inactive), 'limit' (create: the organisation has the most webhooks allowed),
-- 'not_found' (update: no such webhook of the organisation) or 'plugin_missing' (an attached
-- plugin is not the organisation's: deleted meanwhile).
local key, index = KEYS[1], KEYS[2]
local mode, org, wh, limit = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local plugins, n_actions = tonumber(ARGV[5]), tonumber(ARGV[6])
if mode == 'create' then
  if redis.call('ZCARD', index) >= limit then return 'limit' end
elseif redis.call('HGET', key, 'org_id') ~= org then
  return 'not_found'
end
for i = 3, 2 + plugins do
  if redis.call('HGET', KEYS[i], 'org_id') ~= org then return 'plugin_missing' end
end
local sets, actions = {}, {}
for i = 1, n_actions do
  sets[i] = KEYS[2 + plugins + i]
  actions[i] = ARGV[6 + i]
end
local was_active = redis.call('HGET', key, 'active')
redis.call('HSET', key, unpack(ARGV, 7 + n_actions))
if mode == 'create' then redis.call('ZADD', index, 0, wh) end
index_subscriptions(key, wh, sets, actions)
local filter = redis.call('HGET', key, 'filter')
if filter and filter ~= '' and redis.call('HGET', key, 'active') == '1' then
  redis.call('HSET', KEYS[#KEYS], wh, filter)
else
  redis.call('HDEL', KEYS[#KEYS], wh)
end
if mode == 'update' and was_active ~= '1' and redis.call('HGET', key, 'active') == '1' then return 'reactivated' end
return 'saved'
