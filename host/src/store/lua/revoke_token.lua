-- Revokes one token. KEYS: 1 the token, 2 its client's tokens. ARGV: 1 the token's hash.
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
