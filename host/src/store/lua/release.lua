-- Gives events that stopped being the newest snapshot of their record their TTL back: the
-- retention of their organisation's plan.
-- KEYS: 1 the partition's released list, then the listed events' keys
-- ARGV: 1 how many entries of the list these are, then each event's retention (ms)
for i = 2, #KEYS do
  if redis.call('PTTL', KEYS[i]) == -1 then redis.call('PEXPIRE', KEYS[i], ARGV[i]) end
end
redis.call('LTRIM', KEYS[1], tonumber(ARGV[1]), -1)
return #KEYS - 1
