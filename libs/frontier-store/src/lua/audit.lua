-- Appends to hosts' audit logs.
-- ARGV[5…] per host: the host, its number of entries n, then the n entries.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local i = 5
while i <= #ARGV do
  local key = P..'audit:'..ARGV[i]
  local n = tonumber(ARGV[i + 1])
  for k = i + 2, i + 1 + n do redis.call('RPUSH', key, ARGV[k]) end
  redis.call('LTRIM', key, -CFG.al, -1)
  i = i + 2 + n
end
return 0
