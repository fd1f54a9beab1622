-- Parks a delivery whose webhook has no free slot: off the stream, onto the webhook's list.
-- KEYS: 1 ready stream, 2 parked list of the webhook, 3 set of webhooks with parked work
-- ARGV: 1 group, 2 entry id, 3 delivery, 4 webhook
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
return 1
