-- Adds URLs to their front queues.
-- ARGV[4] now, ARGV[5] batch id or '', ARGV[6] batch memory ms, ARGV[7] the slice's number (0-based),
-- ARGV[8…] (priority, host, item) triples. Answers -1 for a slice already enqueued, else the URLs added, with
-- the heap's earliest due time (withDueAt).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

init()
local now = tonumber(ARGV[4])
if ARGV[5] ~= '' then
  local key = P..'batch:'..ARGV[5]
  local k = tonumber(ARGV[7])
  if num(redis.call('GET', key), 0) > k then return withDueAt(-1) end
  redis.call('SET', key, k + 1, 'PX', ARGV[6])
end
local before = frontCount()
local n = 0
for i = 8, #ARGV, 3 do
  redis.call('RPUSH', P..'f:'..ARGV[i], ARGV[i + 1]..'\t'..ARGV[i + 2])
  n = n + 1
end
redis.call('INCRBY', P..'size', n)
redis.call('SET', P..'fq', before + n)
route(now)
return withDueAt(n)
