/**
 * How many messages the jobs of one BullMQ queue hold, by state. A job's name says how many messages its
 * envelope was sent with (`envelopeName`), so the count reads one short hash field per job rather than
 * decoding its data; a job that failed for good keeps only the messages that failed, and says how many in
 * its `progress` (see the driver's `process`). Jobs written before names carried the count are decoded.
 *
 * The script reads at most `maxJobs` jobs of each state and scales their sum up to the state's job count, so
 * a scrape costs O(maxJobs) whatever the backlog: exact below that many jobs, an estimate past it (envelopes
 * of one queue are filled alike, so the estimate is close). One script is one atomic read: no job is counted
 * twice or missed while it moves between states.
 */
export const ENVELOPE_COUNT_SCRIPT = `
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
`;

/** The name of a job carrying `messages` messages: what ENVELOPE_COUNT_SCRIPT reads. */
export function envelopeName(messages: number): string {
  return `envelope of ${messages}`;
}
