-- Gives held stream entries back (a worker shutting down): each is acknowledged and added
-- again at the end of the stream, for any worker to take at once.
-- KEYS: 1 ready stream. ARGV: 1 group, then triples of entry id, delivery, webhook
for i = 2, #ARGV, 3 do
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
  redis.call('XADD', KEYS[1], '*', 'd', ARGV[i + 1], 'w', ARGV[i + 2])
end
return (#ARGV - 1) / 3
