-- Reads what the attempts of claimed deliveries need, counting each attempt as it starts
-- (a delivery sent again after its worker died carries the next number).
-- KEYS: the deliveries, then the events the caller does not hold already (each once)
-- ARGV: 1 number of deliveries, 2 how many fields a plain row has once counted
--       (`store::row`: one nothing but publish and its loads wrote)
-- Returns per delivery its attempt number alone when the row holds nothing more (a
-- delivery not yet attempted or changed: most of them), else the fields it has of
-- {'n', attempt number, 's' status, 'k' last place in the schedule, 'b' rendered body,
-- 'h' extra headers, 'p' plugin outcomes, 'v' manual extra attempts so far, 'm' the due
-- time a manual retry of a waiting delivery kept, 'z' its subject when its webhook keeps
-- each subject's order (`order.lua`)}, by name; false when the row is gone, or
-- {'error', why} (one row that cannot be read fails only its own reply); then per event its
-- stored value or false.
local n, plain = tonumber(ARGV[1]), tonumber(ARGV[2])
local function load(key)
  -- ('1' as text: Redis would format a Lua number for every call.)
  local count = redis.call('HINCRBY', key, 'n', '1')
  -- A plain row is known by its length: nothing else of it needs reading. So is an
  -- ordered one whose only other field is its subject (`z`).
  local len = redis.call('HLEN', key)
  if len == plain then return count end
  if len == plain + 1 then
    local z = redis.call('HGET', key, 'z')
    if z then return {'n', count, 'z', z} end
  end
  local f = redis.call('HMGET', key, 'o', 's', 'k', 'b', 'h', 'p', 'v', 'm', 'z')
  if not f[1] then
    -- There was no row (HINCRBY made one): leave nothing behind.
    redis.call('DEL', key)
    return false
  end
  local names = {'s', 'k', 'b', 'h', 'p', 'v', 'm', 'z'}
  local named = {'n', count}
  for i = 2, 9 do
    if f[i] then
      named[#named + 1] = names[i - 1]
      named[#named + 1] = f[i]
    end
  end
  if #named == 2 then return count end
  return named
end
local out = {}
for i = 1, n do
  local ok, reply = pcall(load, KEYS[i])
  if ok then
    out[i] = reply
  else
    out[i] = {'error', type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
for i = n + 1, #KEYS do
  local ok, value = pcall(redis.call, 'GET', KEYS[i])
  out[i] = ok and value or false
end
return out
