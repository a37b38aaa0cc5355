-- The functions every frontier script starts with (each script is this file, a newline, then its own).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration (n front queues, m back queues, bias, k per-host limit, ipk
-- per-IP limit, ipiv per-IP interval, ipstep domains per step of the per-IP allowance, ipmax its largest
-- multiplier, al audit length), ARGV[3] random seed in [0, 1).
-- Keys: f:<i> front lists ("host<TAB>item"), b:<j> back lists (items), bhost (j → host), hostb (host → j),
-- heap (zset j → due ms), free (list of idle j), l:<id> (a lease: "j<TAB>host<TAB>ip<TAB>item"; a store written
-- before kept them in the hash lease, id → the same, still read), leases (zset id → expiry), h:<host> (hash: next, inflight, fetched, ip, ipr: the range rule it last wrote to its address, delay,
-- blocked, budget, pol, limit: its own in-flight limit over k, a site's concurrency), ip:<ip> (hash: next,
-- inflight, wait: the next free waiting slot of a host held back by the address), audit:<host> (list),
-- hosts (zset of every host given a back queue, all scored 0: read in name order), size, fq (entries in the
-- front queues), fetched, seq, init.

-- The per-IP allowance (PerIpAllowance, ipScale below) adds to ip:<ip> dom (distinct domains seen there) and rule
-- ('' | 'cdn' | 'strict'), and keeps the domains in ipd:<ip> (a set, at most ipstep × ipmax of them).

-- Turns taken at a host without a URL (take-turn.lua): turn (hash id → "host<TAB>ip"), turns (zset id → expiry).

local P = ARGV[1]
local CFG = cjson.decode(ARGV[2])
-- Lua's math.random is not seeded per call; ARGV[3] seeds a Park-Miller generator (exact in doubles).
local seed = math.floor(tonumber(ARGV[3]) * 2147483646) + 1
local function rand() seed = (seed * 48271) % 2147483647; return seed / 2147483647 end
local function num(x, d) if x == false or x == nil then return d end return tonumber(x) end

-- A change's answer with the heap's earliest due time after it ('' when empty): a sharded frontier keeps
-- track of which shards have hosts due, and reading it here saves a command and a round trip a change.
local function withDueAt(answer)
  local top = redis.call('ZRANGE', P..'heap', 0, 0, 'WITHSCORES')
  return { answer, top[2] or '' }
end

-- Idle back queues: the free list, made on first use. Only an empty list can be a store not yet made (every back
-- queue in use is the other reason), so `init` is looked at then, not on every call.
local function freeCount()
  local free = redis.call('LLEN', P..'free')
  if free > 0 or redis.call('EXISTS', P..'init') == 1 then return free end
  for j = 0, CFG.m - 1 do redis.call('RPUSH', P..'free', j) end
  redis.call('SET', P..'init', CFG.m)
  return CFG.m
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

-- Gives a host without a back queue a free one (the caller knows one is free): the router's table both ways,
-- and the host among those served.
local function assignBackQueue(host)
  local j = redis.call('LPOP', P..'free')
  redis.call('HSET', P..'hostb', host, j)
  redis.call('HSET', P..'bhost', j, host)
  redis.call('ZADD', P..'hosts', 0, host)
  return j
end

-- A front queue at random among the open ones (open(i)), queue i `bias` times likelier than queue i+1; nil
-- when none is open.
local function pickFront(open)
  local total = 0
  for i = 0, CFG.n - 1 do if open(i) then total = total + CFG.bias ^ (-i) end end
  if total == 0 then return nil end
  local r = rand() * total
  local pick
  for i = 0, CFG.n - 1 do
    if open(i) then
      pick = i
      r = r - CFG.bias ^ (-i)
      if r <= 0 then break end
    end
  end
  return pick
end

-- A host's in-flight limit, from its `limit` field: its own if it has one, else the crawl's.
local function limitOf(own) return num(own, CFG.k) end

-- A back queue that was empty and just got URLs enters the heap, unless it is there already or its host has
-- its limit in flight (a completion puts it back).
local function wake(j, host, now)
  if redis.call('ZSCORE', P..'heap', j) then return end
  local h = redis.call('HMGET', P..'h:'..host, 'inflight', 'limit')
  if num(h[1], 0) < limitOf(h[2]) then redis.call('ZADD', P..'heap', dueOf(host, now), j) end
end

-- Sets a host's own in-flight limit: '' leaves it, '0' gives the host the crawl's again, n sets it. A host
-- kept off the heap at its old limit goes back on if the new one leaves it room (wake).
local function setLimit(host, limit, now)
  if limit == '' then return end
  local hk = P..'h:'..host
  local was = redis.call('HGET', hk, 'limit')
  if limit == '0' then
    if not was then return end
    redis.call('HDEL', hk, 'limit')
  elseif was == limit then
    return
  else
    redis.call('HSET', hk, 'limit', limit)
  end
  local j = redis.call('HGET', P..'hostb', host)
  if j and redis.call('LLEN', P..'b:'..j) > 0 then wake(j, host, now) end
end

local function route(now)
  local left = frontCount()
  if left <= 0 then return end
  local free = freeCount()
  -- A front queue found empty is left out of later picks: the pick stays biased among the non-empty
  -- queues, without measuring every front queue on each call.
  local empty = {}
  local function open(i) return not empty[i] end
  local moved = 0
  while moved < 20000 and free > 0 and moved < left do
    local pick = pickFront(open)
    if not pick then
      -- Every front queue is empty: the count had drifted (it cannot, but a wrong count must not strand URLs).
      redis.call('SET', P..'fq', 0)
      return
    end
    local entry = redis.call('LPOP', P..'f:'..pick)
    if not entry then
      empty[pick] = true
    else
      moved = moved + 1
      local tab = string.find(entry, '\t', 1, true)
      local host = string.sub(entry, 1, tab - 1)
      local item = string.sub(entry, tab + 1)
      local j = redis.call('HGET', P..'hostb', host)
      if not j then
        j = assignBackQueue(host)
        free = free - 1
        redis.call('RPUSH', P..'b:'..j, item)
        redis.call('ZADD', P..'heap', dueOf(host, now), j)
      elseif redis.call('RPUSH', P..'b:'..j, item) == 1 then
        wake(j, host, now)
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

-- Appends entries to a host's audit log. Its last CFG.al entries are the log (the store reads those); the list
-- is trimmed to them once it holds half as many again, not on every push: a host's log is full after a few
-- fetches, and trimming it at each push cost a command an entry, two a page.
local function appendAudit(host, entries)
  local key = P..'audit:'..host
  if redis.call('RPUSH', key, unpack(entries)) > CFG.al + math.ceil(CFG.al / 2) then redis.call('LTRIM', key, -CFG.al, -1) end
end

-- Ends a lease; requeue = the item to put back ('' for none, '\1' for the lease's own item). The host of
-- the lease it ended is left in finishedHost. The crawl's counters it changes (fetched, size) are added up in
-- `ended` and written once by writeEnded(), at the end of a script that ends several leases.
local finishedHost = nil
local ended = { fetched = 0, size = 0 }
local function writeEnded()
  if ended.fetched ~= 0 then redis.call('INCRBY', P..'fetched', ended.fetched) end
  if ended.size ~= 0 then redis.call('DECRBY', P..'size', ended.size) end
  ended.fetched, ended.size = 0, 0
end
-- The per-IP allowance's multiplier (PerIpAllowance.scale): nil on a CDN range (no per-IP limit).
local function ipScale(dom, rule)
  if rule == 'cdn' then return nil end
  if rule == 'strict' then return 1 end
  return math.min(CFG.ipmax, math.max(1, math.ceil(dom / CFG.ipstep)))
end

-- The host's address as reported by a completion: its domain counted there once the host is first seen on it,
-- the address's range rule refreshed (ranges may change across a restart). hostIp and hostRule are what the
-- host had; the host keeps the rule it last wrote (ipr) so that an unchanged rule costs no write.
local function learnAddress(hk, hostIp, hostRule, ip, site, rule)
  local ik = P..'ip:'..ip
  if hostIp ~= ip then
    local dk = P..'ipd:'..ip
    local dom = redis.call('SCARD', dk)
    if dom < CFG.ipstep * CFG.ipmax then dom = dom + redis.call('SADD', dk, site) end
    redis.call('HSET', ik, 'rule', rule, 'dom', dom)
    redis.call('HSET', hk, 'ip', ip, 'ipr', rule)
  elseif hostRule ~= rule then
    redis.call('HSET', ik, 'rule', rule)
    redis.call('HSET', hk, 'ipr', rule)
  end
end

-- finish's site and rule: the host's registrable domain and its address's range rule (learnAddress); limit:
-- the host's own in-flight limit as setLimit takes it (nil = as it was), applied before the host is put back.
local function finish(id, nextAt, requeue, ip, fetched, pol, now, site, rule, limit)
  local rec = redis.call('GETDEL', P..'l:'..id)
  if not rec then
    -- A lease of a store written before each lease had a key of its own.
    rec = redis.call('HGET', P..'lease', id)
    if not rec then return 0 end
    redis.call('HDEL', P..'lease', id)
  end
  redis.call('ZREM', P..'leases', id)
  local t1 = string.find(rec, '\t', 1, true)
  local t2 = string.find(rec, '\t', t1 + 1, true)
  local t3 = string.find(rec, '\t', t2 + 1, true)
  local j = string.sub(rec, 1, t1 - 1)
  local host = string.sub(rec, t1 + 1, t2 - 1)
  local leaseIp = string.sub(rec, t2 + 1, t3 - 1)
  local item = string.sub(rec, t3 + 1)
  finishedHost = host
  if requeue == '\1' then requeue = item end
  local hk = P..'h:'..host
  local h = redis.call('HMGET', hk, 'inflight', 'next', 'blocked', 'ip', 'ipr', 'fetched', 'limit')
  local inflight = num(h[1], 0) - 1
  local k = limitOf(h[7])
  if leaseIp ~= '' then redis.call('HINCRBY', P..'ip:'..leaseIp, 'inflight', -1) end
  if ip ~= '' then
    if site == '' then site = host end
    learnAddress(hk, h[4], h[5], ip, site, rule)
  end
  local nx = num(h[2], 0)
  if nextAt > nx then nx = nextAt end
  -- One write of the host's fields (the count of pages fetched among them: the hash was read just above).
  local fields = { 'inflight', inflight, 'next', nx }
  if pol ~= '' then fields[#fields + 1] = 'pol'; fields[#fields + 1] = pol end
  if fetched == '1' then
    fields[#fields + 1] = 'fetched'
    fields[#fields + 1] = num(h[6], 0) + 1
    ended.fetched = ended.fetched + 1
  end
  if limit == '0' then
    if h[7] then redis.call('HDEL', hk, 'limit') end
    k = CFG.k
  elseif limit and limit ~= '' and limit ~= h[7] then
    fields[#fields + 1] = 'limit'
    fields[#fields + 1] = limit
    k = tonumber(limit)
  end
  redis.call('HSET', hk, unpack(fields))
  if requeue ~= '' then redis.call('LPUSH', P..'b:'..j, requeue) else ended.size = ended.size + 1 end
  if redis.call('LLEN', P..'b:'..j) > 0 then
    if inflight < k then redis.call('ZADD', P..'heap', math.max(nx, num(h[3], 0)), j) end
  elseif inflight <= 0 then
    release(j, host, now)
  end
  return 1
end

-- Ends a turn taken without a URL (take-turn.lua): the host and its address are no longer busy with it, the
-- host rests until nextAt, and its back queue, which a claim dropped from the heap while the turn held the
-- host, is put back (or freed if it emptied meanwhile), as finish does.
local function endTurn(id, nextAt, now)
  local rec = redis.call('HGET', P..'turn', id)
  if not rec then return 0 end
  redis.call('HDEL', P..'turn', id)
  redis.call('ZREM', P..'turns', id)
  local tab = string.find(rec, '\t', 1, true)
  local host = string.sub(rec, 1, tab - 1)
  local ip = string.sub(rec, tab + 1)
  local hk = P..'h:'..host
  local h = redis.call('HMGET', hk, 'inflight', 'next', 'blocked', 'limit')
  local inflight = num(h[1], 0) - 1
  local nx = math.max(num(h[2], 0), nextAt)
  redis.call('HSET', hk, 'inflight', inflight, 'next', nx)
  redis.call('HINCRBY', P..'ip:'..ip, 'inflight', -1)
  local j = redis.call('HGET', P..'hostb', host)
  if not j then return 1 end
  if redis.call('LLEN', P..'b:'..j) > 0 then
    if inflight < limitOf(h[4]) then redis.call('ZADD', P..'heap', math.max(nx, num(h[3], 0)), j) end
  elseif inflight <= 0 then
    release(j, host, now)
  end
  return 1
end
