-- Drops a host's queued URLs and caps its budget at what it has fetched or has in flight.
-- ARGV[4] now, ARGV[5] host. Answers the URLs dropped.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local host = ARGV[5]
local hk = P..'h:'..host
local h = redis.call('HMGET', hk, 'fetched', 'inflight')
local inflight = num(h[2], 0)
redis.call('HSET', hk, 'budget', num(h[1], 0) + inflight)
local j = redis.call('HGET', P..'hostb', host)
if not j then return 0 end
local dropped = redis.call('LLEN', P..'b:'..j)
redis.call('DECRBY', P..'size', dropped)
redis.call('DEL', P..'b:'..j)
redis.call('ZREM', P..'heap', j)
if inflight == 0 then release(j, host, now) end
return dropped
