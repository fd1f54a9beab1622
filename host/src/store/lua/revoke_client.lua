-- Revokes a client: its tokens stop working at once (every lookup reads `revoked`).
-- KEYS: 1 the client, 2 its tokens. Returns the hashes of its live tokens (the caller
-- deletes them), or false when there is no such client.
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'revoked', '1')
local hashes = redis.call('ZRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2])
return hashes
