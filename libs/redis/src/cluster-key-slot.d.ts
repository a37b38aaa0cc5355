declare module 'cluster-key-slot' {
  /** CRC16 of the key's hash tag (or of the whole key) modulo 16384. */
  export default function calculateSlot(key: string | Buffer): number;
}
