-- Adds URLs to their front queues: the slices of one or more batches, each recorded apart.
-- ARGV[4] now, ARGV[5] batch memory ms, ARGV[6] g, the number of slices, then g triples (batch id or '', the
-- slice's number (0-based), its number of URLs), then every slice's (priority, host, item, the host's own
-- in-flight limit as setLimit takes it) quadruples, in the slices' order. Answers, for each slice, -1 if it was
-- already enqueued, else the URLs added, with the heap's earliest due time (withDueAt).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

-- While the front queues are empty, route() would pop every URL just pushed: instead the URLs are routed
-- from the arguments, with the same biased picks, a host's back queue looked up once and each back queue
-- pushed once. The ends are route()'s: back queues as route() leaves them, and what it would leave in the
-- front queues (once no back queue is free) pushed there in order. `urls` holds the ARGV index of each URL's
-- priority.
local function routeUrls(urls, now)
  local queues, heads = {}, {}
  for i = 0, CFG.n - 1 do queues[i] = {}; heads[i] = 1 end
  for _, a in ipairs(urls) do
    local list = queues[tonumber(ARGV[a])]
    list[#list + 1] = a
  end
  local left = #urls
  local free = freeCount()
  local backOf, hostOf, given = {}, {}, {}
  local pushes, order = {}, {}
  local function open(i) return heads[i] <= #queues[i] end
  while left > 0 and free > 0 do
    local pick = pickFront(open)
    local a = queues[pick][heads[pick]]
    heads[pick] = heads[pick] + 1
    left = left - 1
    local host = ARGV[a + 1]
    local j = backOf[host]
    if not j then
      j = redis.call('HGET', P..'hostb', host)
      if not j then
        j = assignBackQueue(host)
        free = free - 1
        given[j] = true
      end
      backOf[host] = j
      hostOf[j] = host
    end
    local items = pushes[j]
    if not items then
      items = {}
      pushes[j] = items
      order[#order + 1] = j
    end
    items[#items + 1] = ARGV[a + 2]
  end
  for _, j in ipairs(order) do
    local items = pushes[j]
    local host = hostOf[j]
    local length = redis.call('RPUSH', P..'b:'..j, unpack(items))
    if given[j] then
      redis.call('ZADD', P..'heap', dueOf(host, now), j)
    elseif length == #items then
      wake(j, host, now)
    end
  end
  if left > 0 then
    for i = 0, CFG.n - 1 do
      local list = queues[i]
      if heads[i] <= #list then
        local entries = {}
        for x = heads[i], #list do entries[#entries + 1] = ARGV[list[x] + 1]..'\t'..ARGV[list[x] + 2] end
        redis.call('RPUSH', P..'f:'..i, unpack(entries))
      end
    end
    redis.call('SET', P..'fq', left)
  end
end

local now = tonumber(ARGV[4])
local g = tonumber(ARGV[6])
local answers, urls = {}, {}
local a = 7 + 3 * g
for s = 0, g - 1 do
  local id, k, count = ARGV[7 + 3 * s], tonumber(ARGV[8 + 3 * s]), tonumber(ARGV[9 + 3 * s])
  local fresh = true
  if id ~= '' then
    local key = P..'batch:'..id
    -- The first slice of a batch (nearly every batch has only one) needs no read: SET NX is the check.
    if k == 0 then
      fresh = redis.call('SET', key, 1, 'PX', ARGV[5], 'NX') ~= false
    elseif num(redis.call('GET', key), 0) > k then
      fresh = false
    else
      redis.call('SET', key, k + 1, 'PX', ARGV[5])
    end
  end
  if fresh then
    for x = 0, count - 1 do urls[#urls + 1] = a + 4 * x end
    answers[s + 1] = count
  else
    answers[s + 1] = -1
  end
  a = a + 4 * count
end
-- Limits first: routing may put a host on the heap, and its first claim must see its own limit.
local limits = {}
for _, x in ipairs(urls) do
  if ARGV[x + 3] ~= '' then limits[ARGV[x + 1]] = ARGV[x + 3] end
end
for host, limit in pairs(limits) do setLimit(host, limit, now) end
if #urls == 0 then
  route(now)
  return withDueAt(answers)
end
local before = frontCount()
if before <= 0 then
  routeUrls(urls, now)
else
  for _, x in ipairs(urls) do
    redis.call('RPUSH', P..'f:'..ARGV[x], ARGV[x + 1]..'\t'..ARGV[x + 2])
  end
  redis.call('SET', P..'fq', before + #urls)
  route(now)
end
redis.call('INCRBY', P..'size', #urls)
return withDueAt(answers)
