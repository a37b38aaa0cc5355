-- Leases due hosts' next URLs.
-- ARGV[4] now, ARGV[5] max, ARGV[6] lease ms. Answers {id, host, item, ip, inflight, the address's interval now, due}
-- per claim (due: the host's time in the heap, when its turn came), with the heap's earliest due time after them
-- (withDueAt).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

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
  local h = redis.call('HMGET', hk, 'inflight', 'ip', 'blocked', 'budget', 'fetched', 'limit')
  local inflight = num(h[1], 0)
  local k = limitOf(h[6])
  local blocked = num(h[3], 0)
  if blocked > now then
    redis.call('ZADD', P..'heap', blocked, j)
  elseif inflight >= k then
    -- at its limit: a completion puts it back
  elseif h[4] and num(h[5], 0) + inflight >= tonumber(h[4]) then
    redis.call('DECRBY', P..'size', redis.call('LLEN', P..'b:'..j))
    redis.call('DEL', P..'b:'..j)
    if inflight == 0 then release(j, host, now) end
  else
    local ip = h[2]
    local ipk, iv
    local wait = nil
    local interval = 0
    if ip then
      ipk = P..'ip:'..ip
      iv = redis.call('HMGET', ipk, 'next', 'inflight', 'dom', 'rule', 'wait')
      local scale = ipScale(num(iv[3], 0), iv[4] or '')
      if scale then
        interval = math.floor(CFG.ipiv / scale)
        if num(iv[2], 0) >= CFG.ipk * scale then wait = now + math.max(interval, 50)
        elseif num(iv[1], 0) > now then wait = num(iv[1], 0) end
      end
      -- Held back by its address: looked at again at the address's next free waiting slot (waitSlot in the
      -- memory driver), the slots one interval apart.
      if wait then
        wait = math.max(wait, num(iv[5], 0))
        redis.call('HSET', ipk, 'wait', wait + math.max(interval, 1))
      end
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
        -- The address's hash was read above, in this same script: one write sets both.
        if ip then redis.call('HSET', ipk, 'inflight', num(iv[2], 0) + 1, 'next', now + interval) end
        seq = seq + 1
        local id = tostring(seq)
        records[#records + 1] = id
        records[#records + 1] = j..'\t'..host..'\t'..(ip or '')..'\t'..item
        expiries[#expiries + 1] = now + leaseMs
        expiries[#expiries + 1] = id
        if inflight < k and redis.call('LLEN', P..'b:'..j) > 0 then redis.call('ZADD', P..'heap', now, j) end
        out[#out + 1] = { id, host, item, ip or '', inflight, interval, top[2] }
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
return withDueAt(out)
