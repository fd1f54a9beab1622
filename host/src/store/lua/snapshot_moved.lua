-- Forgets snapshot pointers that moved to PostgreSQL with their events (`history::mover`),
-- each only if it is still the value that was moved: one changed since (a newer event about
-- the record) stays, to move with its own event.
-- KEYS: the organisations' snapshots hashes (one partition)
-- ARGV: triples: the key's place in KEYS, the record ('Type:id'), the pointer that moved
-- Reply: how many were forgotten
local forgotten = 0
for i = 1, #ARGV, 3 do
  local key, field = KEYS[tonumber(ARGV[i])], ARGV[i + 1]
  if redis.call('HGET', key, field) == ARGV[i + 2] then
    redis.call('HDEL', key, field)
    forgotten = forgotten + 1
  end
end
return forgotten
