-- After a worker took a job: BullMQ's take marks the queue again whatever is left (so that another worker
-- wakes), which sends this worker, waiting on the marker, to take again at once and find nothing. The mark is
-- taken back when nothing is waiting. A job added meanwhile marks the queue itself, before or after this runs.
-- KEYS[1] wait (list), KEYS[2] prioritized (zset), KEYS[3] marker (zset; member '0' = jobs waiting, the others
-- are delayed jobs' times, left alone). Answers 1 when the mark was taken back.
if redis.call('LLEN', KEYS[1]) == 0 and redis.call('ZCARD', KEYS[2]) == 0 then
  return redis.call('ZREM', KEYS[3], '0')
end
return 0
