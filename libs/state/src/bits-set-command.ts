import { Command } from 'ioredis';
import { assertBitOffset } from './bit-offset';

/**
 * `BITFIELD <key> SET u1 <offset> 1 …`, a bit's four arguments written straight into the command's text.
 * ioredis writes a command's arguments one at a time (copied, turned into strings, each measured with
 * Buffer.byteLength), and a Bloom step of a page's links is 1,400–2,000 of them: that was two fifths of
 * url-seen's CPU. Redis reads the same bytes either way, so it does the same work. The key is the command's
 * one argument as ioredis sees it, which is how a cluster client finds its slot.
 */
export class BitsSetCommand extends Command {
  private readonly text: string;

  constructor(key: string, offsets: number[]) {
    super('bitfield', [key]);
    let text = `*${2 + 4 * offsets.length}\r\n$8\r\nbitfield\r\n$${Buffer.byteLength(key)}\r\n${key}\r\n`;
    for (const offset of offsets) {
      assertBitOffset(offset);
      const digits = String(offset);
      text += `$3\r\nSET\r\n$2\r\nu1\r\n$${digits.length}\r\n${digits}\r\n$1\r\n1\r\n`;
    }
    this.text = text;
  }

  override toWritable(): string {
    return this.text;
  }
}
