-- Creates a report export and queues it for building, in one step.
-- KEYS: 1 the export, 2 the build queue. ARGV: 1 lifetime (ms), 2 id, 3 now (ms), then
-- field, value pairs.
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
