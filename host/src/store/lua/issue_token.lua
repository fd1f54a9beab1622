-- Stores an access token of a client that is not revoked.
-- KEYS: 1 the client, 2 its tokens (by expiry), 3 the token
-- ARGV: 1 lifetime (ms), 2 now (ms), 3 expiry (ms), 4 the token's hash
if redis.call('HGET', KEYS[1], 'revoked') ~= '0' then return 0 end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
