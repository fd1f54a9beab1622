-- Deletes a plugin of the organisation unless one of its webhooks has it attached. Its code
-- goes when no other plugin of the organisation uses it (the code references of
-- plugin_create.lua); a plugin stored before code was shared (no `shared` field) has its
-- own code key.
-- KEYS: 1 the plugin, 2 its own code (plugins stored before sharing), 3 the organisation's
--       webhooks, 4 its plugins, 5 the shared code of the plugin's hash, 6 the code
--       references, then every webhook of the organisation (as the caller read them)
-- ARGV: 1 organisation, 2 plugin id, 3 the plugin's hash (as the caller read it)
-- Returns 'not_found', 'deleted', 'attached', or 'changed' (the webhooks or the plugin
-- changed meanwhile: read them again and retry).
if redis.call('HGET', KEYS[1], 'org_id') ~= ARGV[1] then return 'not_found' end
if redis.call('HGET', KEYS[1], 'sha256') ~= ARGV[3] then return 'changed' end
if redis.call('ZCARD', KEYS[3]) ~= #KEYS - 6 then return 'changed' end
local needle = '"plugin_id":"' .. ARGV[2] .. '"'
for i = 7, #KEYS do
  local plugins = redis.call('HGET', KEYS[i], 'plugins')
  if plugins and string.find(plugins, needle, 1, true) then return 'attached' end
end
if redis.call('HGET', KEYS[1], 'shared') == '1' then
  local left = redis.call('HINCRBY', KEYS[6], ARGV[3], -1)
  if left <= 0 then
    redis.call('HINCRBY', KEYS[6], 'bytes', -redis.call('STRLEN', KEYS[5]))
    redis.call('HDEL', KEYS[6], ARGV[3])
    redis.call('DEL', KEYS[5])
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[2])
return 'deleted'
