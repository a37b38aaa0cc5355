/**
 * The Redis frontier's scripts. Every key lives under the prefix ARGV[1]; ARGV[2] is the JSON
 * configuration, ARGV[3] a random seed in [0, 1) for the front selector. Scripts build key names
 * themselves; KEYS[1] (`<prefix>init`) is declared only so that a cluster client sends the script to the
 * prefix's slot: on a Redis Cluster the prefix holds a hash tag, so every key a script builds is in that
 * slot too. The logic mirrors MemoryFrontierStore line for line; the contract suite holds them to the same
 * behaviour.
 *
 * Keys: f:<i> front lists ("host\titem"), b:<j> back lists (items), bhost (j → host), hostb (host → j),
 * heap (zset j → due ms), free (list of idle j), lease (hash id → "j\thost\tip\titem"), leases (zset id →
 * expiry), h:<host> (hash: next, inflight, fetched, ip, delay, blocked, budget, pol), ip:<ip> (hash: next,
 * inflight), audit:<host> (list), size, fq (entries in the front queues), fetched, seq, init.
 */
const PRELUDE = `
local P = ARGV[1]
local CFG = cjson.decode(ARGV[2])
-- Lua's math.random is not seeded per call; ARGV[3] seeds a Park-Miller generator (exact in doubles).
local seed = math.floor(tonumber(ARGV[3]) * 2147483646) + 1
local function rand() seed = (seed * 48271) % 2147483647; return seed / 2147483647 end
local function num(x, d) if x == false or x == nil then return d end return tonumber(x) end

local function init()
  if redis.call('EXISTS', P..'init') == 0 then
    for j = 0, CFG.m - 1 do redis.call('RPUSH', P..'free', j) end
    redis.call('SET', P..'init', CFG.m)
  end
end

local function dueOf(host, now)
  local h = redis.call('HMGET', P..'h:'..host, 'next', 'blocked')
  return math.max(now, num(h[1], 0), num(h[2], 0))
end

-- Entries in the front queues, kept in fq so that routing stops when they are gone instead of popping every
-- empty front queue once per call (a sharded frontier routes in many shards per batch). A store written
-- before fq was kept has it counted once.
local function frontCount()
  local fq = redis.call('GET', P..'fq')
  if fq then return tonumber(fq) end
  local n = 0
  for i = 0, CFG.n - 1 do n = n + redis.call('LLEN', P..'f:'..i) end
  redis.call('SET', P..'fq', n)
  return n
end

local function route(now)
  local left = frontCount()
  if left <= 0 then return end
  local free = redis.call('LLEN', P..'free')
  -- A front queue found empty is left out of later picks: the pick stays biased among the non-empty
  -- queues, without measuring every front queue on each call.
  local empty = {}
  local moved = 0
  while moved < 20000 and free > 0 and moved < left do
    local total = 0
    for i = 0, CFG.n - 1 do if not empty[i] then total = total + CFG.bias ^ (-i) end end
    if total == 0 then
      -- Every front queue is empty: the count had drifted (it cannot, but a wrong count must not strand URLs).
      redis.call('SET', P..'fq', 0)
      return
    end
    local r = rand() * total
    local pick
    for i = 0, CFG.n - 1 do
      if not empty[i] then
        pick = i
        r = r - CFG.bias ^ (-i)
        if r <= 0 then break end
      end
    end
    local entry = redis.call('LPOP', P..'f:'..pick)
    if not entry then
      empty[pick] = true
    else
      moved = moved + 1
      local tab = string.find(entry, '\\t', 1, true)
      local host = string.sub(entry, 1, tab - 1)
      local item = string.sub(entry, tab + 1)
      local j = redis.call('HGET', P..'hostb', host)
      if not j then
        j = redis.call('LPOP', P..'free')
        free = free - 1
        redis.call('HSET', P..'hostb', host, j)
        redis.call('HSET', P..'bhost', j, host)
        redis.call('RPUSH', P..'b:'..j, item)
        redis.call('ZADD', P..'heap', dueOf(host, now), j)
      elseif redis.call('RPUSH', P..'b:'..j, item) == 1 and not redis.call('ZSCORE', P..'heap', j)
        and num(redis.call('HGET', P..'h:'..host, 'inflight'), 0) < CFG.k then
        redis.call('ZADD', P..'heap', dueOf(host, now), j)
      end
    end
  end
  if moved > 0 then redis.call('DECRBY', P..'fq', moved) end
end

local function release(j, host, now)
  redis.call('HDEL', P..'hostb', host)
  redis.call('HDEL', P..'bhost', j)
  redis.call('DEL', P..'b:'..j)
  redis.call('ZREM', P..'heap', j)
  redis.call('RPUSH', P..'free', j)
  route(now)
end

-- Ends a lease; requeue = the item to put back ('' for none, '\\1' for the lease's own item). The host of
-- the lease it ended is left in finishedHost.
local finishedHost = nil
local function finish(id, nextAt, requeue, ip, fetched, pol, now)
  local rec = redis.call('HGET', P..'lease', id)
  if not rec then return 0 end
  redis.call('HDEL', P..'lease', id)
  redis.call('ZREM', P..'leases', id)
  local t1 = string.find(rec, '\\t', 1, true)
  local t2 = string.find(rec, '\\t', t1 + 1, true)
  local t3 = string.find(rec, '\\t', t2 + 1, true)
  local j = string.sub(rec, 1, t1 - 1)
  local host = string.sub(rec, t1 + 1, t2 - 1)
  local leaseIp = string.sub(rec, t2 + 1, t3 - 1)
  local item = string.sub(rec, t3 + 1)
  finishedHost = host
  if requeue == '\\1' then requeue = item end
  local hk = P..'h:'..host
  local h = redis.call('HMGET', hk, 'inflight', 'next', 'blocked')
  local inflight = num(h[1], 0) - 1
  if leaseIp ~= '' then redis.call('HINCRBY', P..'ip:'..leaseIp, 'inflight', -1) end
  if ip ~= '' then redis.call('HSET', hk, 'ip', ip) end
  local nx = num(h[2], 0)
  if nextAt > nx then nx = nextAt end
  if pol ~= '' then redis.call('HSET', hk, 'inflight', inflight, 'next', nx, 'pol', pol)
  else redis.call('HSET', hk, 'inflight', inflight, 'next', nx) end
  if fetched == '1' then
    redis.call('HINCRBY', hk, 'fetched', 1)
    redis.call('INCR', P..'fetched')
  end
  if requeue ~= '' then redis.call('LPUSH', P..'b:'..j, requeue) else redis.call('DECR', P..'size') end
  if redis.call('LLEN', P..'b:'..j) > 0 then
    if inflight < CFG.k then redis.call('ZADD', P..'heap', math.max(nx, num(h[3], 0)), j) end
  elseif inflight <= 0 then
    release(j, host, now)
  end
  return 1
end
`;

/**
 * ARGV[4] now, ARGV[5] batch id or '', ARGV[6] batch memory ms, ARGV[7] the slice's number k (0-based), then
 * (priority, host, item) triples. `batch:<id>` counts the slices of the batch already enqueued, and is raised in
 * the same step as the slice goes in: a batch cut short by a crash resumes at its first missing slice when
 * redelivered. Answers -1 for a slice already enqueued, else the URLs added.
 */
export const ENQUEUE = `${PRELUDE}
init()
local now = tonumber(ARGV[4])
if ARGV[5] ~= '' then
  local key = P..'batch:'..ARGV[5]
  local k = tonumber(ARGV[7])
  if num(redis.call('GET', key), 0) > k then return -1 end
  redis.call('SET', key, k + 1, 'PX', ARGV[6])
end
local before = frontCount()
local n = 0
for i = 8, #ARGV, 3 do
  redis.call('RPUSH', P..'f:'..ARGV[i], ARGV[i + 1]..'\\t'..ARGV[i + 2])
  n = n + 1
end
redis.call('INCRBY', P..'size', n)
redis.call('SET', P..'fq', before + n)
route(now)
return n`;

/** ARGV[4] now, ARGV[5] max: due recrawls ("priority\thost\titem" members of zset `recrawl`) into their front queues. */
export const PROMOTE = `${PRELUDE}
init()
local now = tonumber(ARGV[4])
local due = redis.call('ZRANGEBYSCORE', P..'recrawl', '-inf', now, 'LIMIT', 0, tonumber(ARGV[5]))
if #due > 0 then redis.call('SET', P..'fq', frontCount() + #due) end
for _, member in ipairs(due) do
  redis.call('ZREM', P..'recrawl', member)
  local tab = string.find(member, '\t', 1, true)
  redis.call('RPUSH', P..'f:'..string.sub(member, 1, tab - 1), string.sub(member, tab + 1))
end
if #due > 0 then
  redis.call('INCRBY', P..'size', #due)
  route(now)
end
return #due`;

/** ARGV[4] now, ARGV[5] max, ARGV[6] lease ms. Answers {id, host, item, ip, inflight} per claim. */
export const CLAIM = `${PRELUDE}
init()
local now = tonumber(ARGV[4])
local max = tonumber(ARGV[5])
local leaseMs = tonumber(ARGV[6])
local out = {}
-- Lease records are written once, in bulk, at the end; ids follow seq.
local seq = num(redis.call('GET', P..'seq'), 0)
local records, expiries = {}, {}
local guard = 0
while #out < max and guard < max * 4 + 100 do
  guard = guard + 1
  local top = redis.call('ZPOPMIN', P..'heap')
  if #top == 0 then break end
  if tonumber(top[2]) > now then redis.call('ZADD', P..'heap', top[2], top[1]); break end
  local j = top[1]
  local host = redis.call('HGET', P..'bhost', j)
  local hk = P..'h:'..host
  local h = redis.call('HMGET', hk, 'inflight', 'ip', 'blocked', 'budget', 'fetched')
  local inflight = num(h[1], 0)
  local blocked = num(h[3], 0)
  if blocked > now then
    redis.call('ZADD', P..'heap', blocked, j)
  elseif inflight >= CFG.k then
    -- at its limit: a completion puts it back
  elseif h[4] and num(h[5], 0) + inflight >= tonumber(h[4]) then
    redis.call('DECRBY', P..'size', redis.call('LLEN', P..'b:'..j))
    redis.call('DEL', P..'b:'..j)
    if inflight == 0 then release(j, host, now) end
  else
    local ip = h[2]
    local ipk
    local wait = nil
    if ip then
      ipk = P..'ip:'..ip
      local iv = redis.call('HMGET', ipk, 'next', 'inflight')
      if num(iv[2], 0) >= CFG.ipk then wait = now + math.max(CFG.ipiv, 50)
      elseif num(iv[1], 0) > now then wait = num(iv[1], 0) end
    end
    if wait then
      redis.call('ZADD', P..'heap', wait, j)
    else
      local item = redis.call('LPOP', P..'b:'..j)
      if not item then
        if inflight == 0 then release(j, host, now) end
      else
        inflight = inflight + 1
        redis.call('HSET', hk, 'inflight', inflight)
        if ip then
          redis.call('HINCRBY', ipk, 'inflight', 1)
          redis.call('HSET', ipk, 'next', now + CFG.ipiv)
        end
        seq = seq + 1
        local id = tostring(seq)
        records[#records + 1] = id
        records[#records + 1] = j..'\\t'..host..'\\t'..(ip or '')..'\\t'..item
        expiries[#expiries + 1] = now + leaseMs
        expiries[#expiries + 1] = id
        if inflight < CFG.k and redis.call('LLEN', P..'b:'..j) > 0 then redis.call('ZADD', P..'heap', now, j) end
        out[#out + 1] = { id, host, item, ip or '', inflight }
      end
    end
  end
end
if #records > 0 then
  redis.call('SET', P..'seq', seq)
  for i = 1, #records, 1000 do
    local last = math.min(i + 999, #records)
    redis.call('HSET', P..'lease', unpack(records, i, last))
    redis.call('ZADD', P..'leases', unpack(expiries, i, last))
  end
end
return out`;

/**
 * ARGV[4] now, ARGV[5] lease id, ARGV[6] nextAt, ARGV[7] requeue item or '', ARGV[8] ip or '', ARGV[9] '1' if
 * fetched, ARGV[10] politeness JSON or '', ARGV[11] retry-later item or '', ARGV[12] its front queue, ARGV[13]
 * its due time, ARGV[14…] entries for the host's audit log. A retry-later item joins the recrawl set (see
 * PROMOTE) under the lease's own host.
 */
export const COMPLETE = `${PRELUDE}
local done = finish(ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9], ARGV[10], tonumber(ARGV[4]))
if done == 1 and ARGV[7] == '' and ARGV[11] ~= '' then
  redis.call('ZADD', P..'recrawl', tonumber(ARGV[13]), ARGV[12]..'\t'..finishedHost..'\t'..ARGV[11])
end
if done == 1 and #ARGV >= 14 then
  local key = P..'audit:'..finishedHost
  for i = 14, #ARGV do redis.call('RPUSH', key, ARGV[i]) end
  redis.call('LTRIM', key, -CFG.al, -1)
end
return done`;

/** Answers {leased, fetched}: what every dispatcher round reads, in one command. */
export const COUNTS = `${PRELUDE}
return { redis.call('HLEN', P..'lease'), num(redis.call('GET', P..'fetched'), 0) }`;

/** Answers {size, scheduled, free back queues, init (0/1), hosts due, leased, front queue lengths…}. */
export const STATS = `${PRELUDE}
local answer = {
  num(redis.call('GET', P..'size'), 0),
  redis.call('ZCARD', P..'recrawl'),
  redis.call('LLEN', P..'free'),
  redis.call('EXISTS', P..'init'),
  redis.call('ZCARD', P..'heap'),
  redis.call('HLEN', P..'lease'),
}
for i = 0, CFG.n - 1 do answer[#answer + 1] = redis.call('LLEN', P..'f:'..i) end
return answer`;

/** ARGV[5…] per host: the host, its number of entries n, then the n entries for its audit log. */
export const AUDIT = `${PRELUDE}
local i = 5
while i <= #ARGV do
  local key = P..'audit:'..ARGV[i]
  local n = tonumber(ARGV[i + 1])
  for k = i + 2, i + 1 + n do redis.call('RPUSH', key, ARGV[k]) end
  redis.call('LTRIM', key, -CFG.al, -1)
  i = i + 2 + n
end
return 0`;

/** ARGV[4] now, ARGV[5] retryAt, ARGV[6…] lease ids to reclaim ('*' = every expired one). */
export const RECLAIM = `${PRELUDE}
local now = tonumber(ARGV[4])
local retryAt = tonumber(ARGV[5])
local ids = {}
if ARGV[6] == '*' then ids = redis.call('ZRANGEBYSCORE', P..'leases', '-inf', now)
else for i = 6, #ARGV do ids[#ids + 1] = ARGV[i] end end
local n = 0
for _, id in ipairs(ids) do n = n + finish(id, retryAt, '\\1', '', '0', '', now) end
return n`;

/** ARGV[4] now, ARGV[5] host, ARGV[6] JSON {delayMs?, blockedUntil?, budget?} (null clears). */
export const SET_CONTROLS = `${PRELUDE}
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
return 1`;

/** ARGV[4] now, ARGV[5] host. Answers the number of URLs dropped. */
/** Drops from the tails of the lowest-priority front queues until at most ARGV[5] entries wait there. */
export const PRUNE = `${PRELUDE}
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
return dropped`;

export const PURGE = `${PRELUDE}
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
return dropped`;
