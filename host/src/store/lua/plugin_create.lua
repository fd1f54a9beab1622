-- Stores a plugin unless the organisation is at its limit.
-- KEYS: 1 the plugin, 2 its code, 3 the organisation's plugins
-- ARGV: 1 most plugins, 2 id, 3 org, 4 name, 5 sha256, 6 size, 7 created_at, 8 the code
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'org_id', ARGV[3], 'name', ARGV[4], 'sha256', ARGV[5], 'size', ARGV[6], 'created_at', ARGV[7])
redis.call('SET', KEYS[2], ARGV[8])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
return 1
