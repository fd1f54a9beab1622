-- Stores a plugin unless the organisation is at a limit, as the next version of its name.
-- Its code is kept once per organisation and hash (KEYS[2]), counted in the organisation's
-- code references (KEYS[5]: hash → plugins using it, and `bytes`: the code stored in all).
-- KEYS: 1 the plugin, 2 the code of its hash, 3 the organisation's plugins, 4 its last
--       version per name, 5 its code references
-- ARGV: 1 most plugins, 2 most bytes of code, 3 id, 4 org, 5 name, 6 sha256, 7 size,
--       8 created_at, 9 the code ('' when the caller saw it stored already)
-- Returns {'version', n} (1, 2, …), or {'refused', why}: 'plugins' or 'bytes' (a limit),
-- 'code' (the code is not stored after all: call again with it).
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[1]) then return {'refused', 'plugins'} end
local sha, size = ARGV[6], tonumber(ARGV[7])
if redis.call('EXISTS', KEYS[2]) == 0 then
  if ARGV[9] == '' then return {'refused', 'code'} end
  local bytes = tonumber(redis.call('HGET', KEYS[5], 'bytes') or '0')
  if bytes + size > tonumber(ARGV[2]) then return {'refused', 'bytes'} end
  redis.call('SET', KEYS[2], ARGV[9])
  redis.call('HINCRBY', KEYS[5], 'bytes', size)
  redis.call('HSET', KEYS[5], sha, 0)
end
redis.call('HINCRBY', KEYS[5], sha, 1)
local version = redis.call('HINCRBY', KEYS[4], ARGV[5], 1)
redis.call('HSET', KEYS[1], 'id', ARGV[3], 'org_id', ARGV[4], 'name', ARGV[5], 'sha256', sha, 'size', ARGV[7],
  'created_at', ARGV[8], 'version', version, 'shared', '1')
redis.call('ZADD', KEYS[3], 0, ARGV[3])
return {'version', version}
