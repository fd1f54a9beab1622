-- Creates a source within its organisation's limit.
-- KEYS: 1 the source's hash, 2 the organisation's sources. ARGV: 1 most sources, 2 the
-- source's id, then field, value pairs.
-- Returns 1 if created, 0 if the organisation has the most sources allowed.
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], 0, ARGV[2])
return 1
