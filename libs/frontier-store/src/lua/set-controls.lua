-- Sets or clears a host's operator controls.
-- ARGV[4] now, ARGV[5] host, ARGV[6] JSON {delayMs?, blockedUntil?, budget?} (null clears).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local host = ARGV[5]
local c = cjson.decode(ARGV[6])
local hk = P..'h:'..host
local fields = { delayMs = 'delay', blockedUntil = 'blocked', budget = 'budget' }
for key, field in pairs(fields) do
  local v = c[key]
  if v == cjson.null then redis.call('HDEL', hk, field)
  elseif v ~= nil then redis.call('HSET', hk, field, v) end
end
local j = redis.call('HGET', P..'hostb', host)
if j and redis.call('ZSCORE', P..'heap', j) then redis.call('ZADD', P..'heap', dueOf(host, now), j) end
return 1
