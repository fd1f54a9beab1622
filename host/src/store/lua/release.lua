-- Gives events that stopped being the newest snapshot of their record their TTL back.
-- KEYS: 1 the partition's released list, then the listed events' keys
-- ARGV: 1 retention (ms), 2 how many entries of the list these are
for i = 2, #KEYS do
  if redis.call('PTTL', KEYS[i]) == -1 then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
end
redis.call('LTRIM', KEYS[1], tonumber(ARGV[2]), -1)
return #KEYS - 1
