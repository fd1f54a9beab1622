-- Deletes a source, its recent requests and its place in the organisation's sources.
-- KEYS: 1 the source's hash, 2 the organisation's sources, 3 its requests. ARGV: 1 its id.
-- Returns the hash of its ingest token (its index is the caller's to delete: another slot),
-- or false if there is no such source.
local token = redis.call('HGET', KEYS[1], 'token_hash')
if not token then return false end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[2], ARGV[1])
return token
