-- Reads what the attempts of claimed deliveries need, counting each attempt as it starts
-- (a delivery sent again after its worker died carries the next number).
-- KEYS: the deliveries, then the events the caller does not hold already (each once)
-- ARGV: 1 number of deliveries, 2 how many fields a plain record has once counted
--       (`store::deliveries`: one nothing but publish and its loads wrote)
-- Returns per delivery its attempt number alone when the record holds nothing more (a
-- delivery not yet attempted or changed: most of them), else {n, s, k, b, h, p, x, m}
-- (attempt number, status, budget, rendered body, extra headers, plugin outcomes, manual
-- extra attempts so far, the due time a manual retry of a waiting delivery kept); false
-- when the record is gone, or 'error:' and why (one record that cannot be read fails only
-- its own reply); then per event its stored value or false.
local n, plain = tonumber(ARGV[1]), tonumber(ARGV[2])
local function load(key)
  local count = redis.call('HINCRBY', key, 'n', 1)
  -- A plain record is known by its length: nothing else of it needs reading.
  if redis.call('HLEN', key) == plain then return count end
  local f = redis.call('HMGET', key, 'o', 's', 'k', 'b', 'h', 'p', 'v', 'm')
  if not f[1] then
    -- There was no record (HINCRBY made one): leave nothing behind.
    redis.call('DEL', key)
    return false
  end
  for i = 2, 8 do
    if f[i] then return {count, f[2], f[3], f[4], f[5], f[6], f[7], f[8]} end
  end
  return count
end
local out = {}
for i = 1, n do
  local ok, reply = pcall(load, KEYS[i])
  if ok then
    out[i] = reply
  else
    out[i] = 'error:' .. (type(reply) == 'table' and reply.err or tostring(reply))
  end
end
for i = n + 1, #KEYS do
  local ok, value = pcall(redis.call, 'GET', KEYS[i])
  out[i] = ok and value or false
end
return out
