-- Ends leases with their outcomes: the completions that reached the store within a few milliseconds, in one call.
-- ARGV[4] now, ARGV[5] c, the number of completions, then c groups of 13 + a arguments: lease id, nextAt, requeue
-- item or '', ip or '', '1' if fetched, politeness JSON or '', retry-later item or '', its front queue, its due
-- time, the host's registrable domain or '', the address's range rule ('' | 'cdn' | 'strict'), the host's own
-- in-flight limit ('' = as it was, '0' = the crawl's, n), a, the number of entries for the host's audit log,
-- then those a entries. Answers, for each completion, 1, or 0 for an unknown lease, with the heap's earliest due
-- time after them all (withDueAt).
-- A retry-later item joins the recrawl set (promote.lua) under the lease's own host. (The tabs in the ZADD
-- member below are literal tabs.)
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local out = {}
local i = 6
for c = 1, tonumber(ARGV[5]) do
  local requeue, retryItem, audits = ARGV[i + 2], ARGV[i + 6], tonumber(ARGV[i + 12])
  local done = finish(ARGV[i], tonumber(ARGV[i + 1]), requeue, ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], now, ARGV[i + 9], ARGV[i + 10], ARGV[i + 11])
  if done == 1 and requeue == '' and retryItem ~= '' then
    redis.call('ZADD', P..'recrawl', tonumber(ARGV[i + 8]), ARGV[i + 7]..'	'..finishedHost..'	'..retryItem)
  end
  if done == 1 and audits > 0 then appendAudit(finishedHost, { unpack(ARGV, i + 13, i + 12 + audits) }) end
  out[c] = done
  i = i + 13 + audits
end
writeEnded()
return withDueAt(out)
