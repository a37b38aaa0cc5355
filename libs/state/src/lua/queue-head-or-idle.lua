-- KEYS[1] list, KEYS[2] its active flag. Answers the head, or nil after clearing the flag.

      local head = redis.call('LINDEX', KEYS[1], 0)
      if not head then redis.call('DEL', KEYS[2]) end
      return head
