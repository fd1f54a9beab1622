-- Stores a plugin unless the organisation is at its limit, as the next version of its name.
-- KEYS: 1 the plugin, 2 its code, 3 the organisation's plugins, 4 its last version per name
-- ARGV: 1 most plugins, 2 id, 3 org, 4 name, 5 sha256, 6 size, 7 created_at, 8 the code
-- Returns the version (1, 2, …), or 0 at the limit.
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[1]) then return 0 end
local version = redis.call('HINCRBY', KEYS[4], ARGV[4], 1)
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'org_id', ARGV[3], 'name', ARGV[4], 'sha256', ARGV[5], 'size', ARGV[6],
  'created_at', ARGV[7], 'version', version)
redis.call('SET', KEYS[2], ARGV[8])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
return version
