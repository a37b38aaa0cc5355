-- Takes a turn at a host without a URL, when a claim of its next URL would be granted now (see claim.lua):
-- its next time has come, it is not blocked, and it and the address are under their in-flight limits and the
-- address's interval. A turn counts in flight like a lease until end-turn.lua or reclaim.lua ends it.
-- ARGV[4] now, ARGV[5] host, ARGV[6] ip, ARGV[7] lease ms. Answers {id, override delay or '', politeness JSON
-- or ''}, or {'', time to ask again}.
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local host = ARGV[5]
local ip = ARGV[6]
local hk = P..'h:'..host
local ipk = P..'ip:'..ip
local h = redis.call('HMGET', hk, 'next', 'blocked', 'inflight', 'delay', 'pol', 'limit')
local due = math.max(num(h[1], 0), num(h[2], 0))
if due > now then return { '', due } end
-- The address's allowance as the frontier knows it (its completions report its domains and range rule).
local iv = redis.call('HMGET', ipk, 'next', 'inflight', 'dom', 'rule')
local scale = ipScale(num(iv[3], 0), iv[4] or '')
local interval = 0
if scale then interval = math.floor(CFG.ipiv / scale) end
if num(h[3], 0) >= limitOf(h[6]) or (scale and num(iv[2], 0) >= CFG.ipk * scale) then return { '', now + math.max(interval, 50) } end
if scale and num(iv[1], 0) > now then return { '', num(iv[1], 0) } end
redis.call('HINCRBY', hk, 'inflight', 1)
redis.call('HINCRBY', ipk, 'inflight', 1)
redis.call('HSET', ipk, 'next', now + interval)
local id = 't'..redis.call('INCR', P..'seq')
redis.call('HSET', P..'turn', id, host..'\t'..ip)
redis.call('ZADD', P..'turns', now + tonumber(ARGV[7]), id)
return { id, h[4] or '', h[5] or '' }
