-- Drops from the tails of the lowest-priority front queues until at most ARGV[5] entries wait there.
-- ARGV[5] max. Answers the entries dropped.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local max = tonumber(ARGV[5])
local over = frontCount() - max
local dropped = 0
local i = CFG.n - 1
while over > 0 and i >= 0 do
  local key = P..'f:'..i
  local len = redis.call('LLEN', key)
  local take = math.min(over, len)
  if take == len then redis.call('DEL', key) elseif take > 0 then redis.call('LTRIM', key, 0, len - take - 1) end
  dropped = dropped + take
  over = over - take
  i = i - 1
end
if dropped > 0 then
  redis.call('DECRBY', P..'fq', dropped)
  redis.call('DECRBY', P..'size', dropped)
end
return dropped
