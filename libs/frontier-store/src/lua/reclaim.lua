-- Ends expired or named leases, their items put back; with '*', expired turns too (end-turn.lua).
-- ARGV[4] now, ARGV[5] retryAt, ARGV[6…] lease ids ('*' = every expired one). Answers how many.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local retryAt = tonumber(ARGV[5])
local ids = {}
if ARGV[6] == '*' then ids = redis.call('ZRANGEBYSCORE', P..'leases', '-inf', now)
else for i = 6, #ARGV do ids[#ids + 1] = ARGV[i] end end
local n = 0
for _, id in ipairs(ids) do n = n + finish(id, retryAt, '\1', '', '0', '', now, '', '') end
if ARGV[6] == '*' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', P..'turns', '-inf', now)) do n = n + endTurn(id, retryAt, now) end
end
writeEnded()
return n
