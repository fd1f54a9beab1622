-- Deletes a plugin of the organisation unless one of its webhooks has it attached.
-- KEYS: 1 the plugin, 2 its code, 3 the organisation's webhooks, 4 its plugins, then every
--       webhook of the organisation (as the caller read them)
-- ARGV: 1 organisation, 2 plugin id
-- Returns 'not_found', 'deleted', 'attached', or 'changed' (the webhooks changed meanwhile:
-- read them again and retry).
if redis.call('HGET', KEYS[1], 'org_id') ~= ARGV[1] then return 'not_found' end
local listed = {}
for i = 5, #KEYS do listed[KEYS[i]] = true end
if redis.call('ZCARD', KEYS[3]) ~= #KEYS - 4 then return 'changed' end
local needle = '"plugin_id":"' .. ARGV[2] .. '"'
for i = 5, #KEYS do
  local plugins = redis.call('HGET', KEYS[i], 'plugins')
  if plugins and string.find(plugins, needle, 1, true) then return 'attached' end
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[2])
return 'deleted'
