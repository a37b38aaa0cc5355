-- Leases due hosts' next URLs.
-- ARGV[4] now, ARGV[5] max, ARGV[6] lease ms. Answers {id, host, item, ip, inflight, the address's interval now, due}
-- per claim (due: the host's time in the heap, when its turn came), with the heap's earliest due time after them
-- (withDueAt).
-- KEYS[1] <prefix>init (names the slot only; every key is built from ARGV[1]).
-- ARGV[1] key prefix, ARGV[2] JSON configuration, ARGV[3] random seed in [0, 1) (see prelude.lua).

local now = tonumber(ARGV[4])
local max = tonumber(ARGV[5])
local leaseMs = tonumber(ARGV[6])
-- What is claimed, in order: {host, item, ip, inflight, interval, due}; lease ids and records come at the end.
local claimed = {}
local records = {}
local guard = 0
local more = true
-- The heap's due entries are taken a group at a time (ZPOPMIN with a count, their hosts in one HMGET), not one
-- by one: a round claims a few dozen hosts, and two commands each went to finding them. Entries taken that are
-- not due yet go back at once (a group is at most 64, so a round that finds few due hosts moves few back). Another
-- group is taken when every entry of this one was due, or when a host went back due now (room for more of its URLs).
while more and #claimed < max and guard < max * 4 + 100 do
  local top = redis.call('ZPOPMIN', P..'heap', math.min(max - #claimed, 64))
  if #top == 0 then break end
  local due, later = {}, {}
  for x = 1, #top, 2 do
    if tonumber(top[x + 1]) > now then
      later[#later + 1] = top[x + 1]
      later[#later + 1] = top[x]
    else
      due[#due + 1] = x
    end
  end
  if #later > 0 then redis.call('ZADD', P..'heap', unpack(later)) end
  if #due == 0 then break end
  local js = {}
  for _, x in ipairs(due) do js[#js + 1] = top[x] end
  local hosts = redis.call('HMGET', P..'bhost', unpack(js))
  more = #later == 0
  for d, x in ipairs(due) do
    guard = guard + 1
    local j, host = top[x], hosts[d]
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
          records[#records + 1] = j..'\t'..host..'\t'..(ip or '')..'\t'..item
          if inflight < k and redis.call('LLEN', P..'b:'..j) > 0 then
            redis.call('ZADD', P..'heap', now, j)
            more = true
          end
          claimed[#claimed + 1] = { host, item, ip or '', inflight, interval, top[x + 1] }
        end
      end
    end
  end
end
-- Lease ids follow seq: one INCRBY for the round gives them all. Records are written once, in bulk: a key
-- each (l:<id>), so that a completion reads and deletes one with a single GETDEL.
local out = {}
if #records > 0 then
  local first = redis.call('INCRBY', P..'seq', #records) - #records
  local fields, expiries = {}, {}
  for c = 1, #records do
    local id = tostring(first + c)
    fields[#fields + 1] = P..'l:'..id
    fields[#fields + 1] = records[c]
    expiries[#expiries + 1] = now + leaseMs
    expiries[#expiries + 1] = id
    local row = claimed[c]
    out[c] = { id, row[1], row[2], row[3], row[4], row[5], row[6] }
  end
  for i = 1, #fields, 1000 do
    local last = math.min(i + 999, #fields)
    redis.call('MSET', unpack(fields, i, last))
    redis.call('ZADD', P..'leases', unpack(expiries, i, last))
  end
end
return withDueAt(out)
