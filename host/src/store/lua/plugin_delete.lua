-- Deletes a plugin of the organisation unless one of its webhooks has it attached.
-- KEYS: 1 the plugin, 2 its code, 3 the organisation's webhooks, 4 its plugins, then every
--       webhook of the organisation (as the caller read them)
-- ARGV: 1 organisation, 2 plugin id
-- Returns 0 not found, 1 deleted, 2 attached, 3 the webhooks changed meanwhile (read
-- them again and retry).
if redis.call('HGET', KEYS[1], 'org_id') ~= ARGV[1] then return 0 end
local listed = {}
for i = 5, #KEYS do listed[KEYS[i]] = true end
if redis.call('ZCARD', KEYS[3]) ~= #KEYS - 4 then return 3 end
local needle = '"plugin_id":"' .. ARGV[2] .. '"'
for i = 5, #KEYS do
  local plugins = redis.call('HGET', KEYS[i], 'plugins')
  if plugins and string.find(plugins, needle, 1, true) then return 2 end
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[2])
return 1
