-- Messages held by one BullMQ queue's jobs, by state (see envelope-count.ts).
-- KEYS[1] the queue's key prefix (`bull:<queue>:`). ARGV[1] jobs read at most per state.
-- Answers {waiting (wait, prioritized, waiting-children), active, delayed, failed}.

local base, max = KEYS[1], tonumber(ARGV[1])
local function count(id)
  local f = redis.call('HMGET', base .. id, 'name', 'progress')
  if not f[1] then return 0 end
  local kept = tonumber(f[2])
  if kept then return kept end
  local n = string.match(f[1], '^envelope of (%d+)$')
  if n then return tonumber(n) end
  local ok, data = pcall(cjson.decode, redis.call('HGET', base .. id, 'data'))
  if ok and type(data) == 'table' and data.envelope == 1 and type(data.messages) == 'table' then return #data.messages end
  return 1
end
local function sum(ids, total)
  local s = 0
  for _, id in ipairs(ids) do s = s + count(id) end
  if #ids > 0 and total > #ids then s = math.floor(s * total / #ids + 0.5) end
  return s
end
local function list(key)
  return sum(redis.call('LRANGE', base .. key, 0, max - 1), redis.call('LLEN', base .. key))
end
local function zset(key)
  return sum(redis.call('ZRANGE', base .. key, 0, max - 1), redis.call('ZCARD', base .. key))
end
return { list('wait') + zset('prioritized') + zset('waiting-children'), list('active'), zset('delayed'), zset('failed') }

