-- Claims jobs of a lease queue (report exports, replays: store::core::jobs).
-- KEYS: 1 the queue. ARGV: 1 now (ms), 2 lease until (ms), 3 most to take
-- Returns the claimed members.
return take(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]))
