/**
 * BullMQ keeps job ids inside ':'-separated Redis keys and refuses integer-looking custom ids (they would
 * clash with its own counters). Both drivers apply the same rule so code tested on memory runs on BullMQ.
 */
export function assertJobId(id: string | undefined): void {
  if (id === undefined) return;
  if (id === '' || id.includes(':')) {
    throw new Error(`invalid job id ${JSON.stringify(id)}: must be non-empty and contain no ':'`);
  }
  if (`${parseInt(id, 10)}` === id) {
    throw new Error(`invalid job id ${JSON.stringify(id)}: must not be an integer`);
  }
}
