-- Adds URLs to their front queues.
-- ARGV[4] now, ARGV[5] batch id or '', ARGV[6] batch memory ms, ARGV[7] the slice's number (0-based),
-- ARGV[8…] (priority, host, item, the host's own in-flight limit as setLimit takes it) quadruples. Answers -1
-- for a slice already enqueued, else the URLs added, with
-- the heap's earliest due time (withDueAt).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

-- While the front queues are empty, route() would pop every URL just pushed: instead the slice is routed
-- from the arguments, with the same biased picks, a host's back queue looked up once and each back queue
-- pushed once. The ends are route()'s: back queues as route() leaves them, and what it would leave in the
-- front queues (once no back queue is free) pushed there in order.
local function routeSlice(now)
  local queues, heads = {}, {}
  for i = 0, CFG.n - 1 do queues[i] = {}; heads[i] = 1 end
  for a = 8, #ARGV, 4 do
    local list = queues[tonumber(ARGV[a])]
    list[#list + 1] = a
  end
  local left = (#ARGV - 7) / 4
  local free = redis.call('LLEN', P..'free')
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

init()
local now = tonumber(ARGV[4])
if ARGV[5] ~= '' then
  local key = P..'batch:'..ARGV[5]
  local k = tonumber(ARGV[7])
  if num(redis.call('GET', key), 0) > k then return withDueAt(-1) end
  redis.call('SET', key, k + 1, 'PX', ARGV[6])
end
local n = (#ARGV - 7) / 4
-- Limits first: routing may put a host on the heap, and its first claim must see its own limit.
local limits = {}
for a = 8, #ARGV, 4 do
  if ARGV[a + 3] ~= '' then limits[ARGV[a + 1]] = ARGV[a + 3] end
end
for host, limit in pairs(limits) do setLimit(host, limit, now) end
if n == 0 then
  route(now)
  return withDueAt(0)
end
local before = frontCount()
if before <= 0 then
  routeSlice(now)
else
  for i = 8, #ARGV, 4 do
    redis.call('RPUSH', P..'f:'..ARGV[i], ARGV[i + 1]..'\t'..ARGV[i + 2])
  end
  redis.call('SET', P..'fq', before + n)
  route(now)
end
redis.call('INCRBY', P..'size', n)
return withDueAt(n)
