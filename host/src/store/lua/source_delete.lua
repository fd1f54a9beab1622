-- Deletes a source and its place in the organisation's sources.
-- KEYS: 1 the source's hash, 2 the organisation's sources. ARGV: 1 its id.
-- Returns the hash of its ingest token (its index and its listings are the caller's to
-- delete: other slots), or false if there is no such source.
local token = redis.call('HGET', KEYS[1], 'token_hash')
if not token then return false end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return token
