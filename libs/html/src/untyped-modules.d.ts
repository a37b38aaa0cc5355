// Type declarations for two jsdom packages that ship no typings (and have no @types package installed).
// Only the parts this library calls are declared.

declare module 'whatwg-encoding' {
  /** WHATWG "get an encoding": a label → canonical name, or null (unknown, or not decodable by iconv-lite). */
  export function labelToName(label: string): string | null;
  /** 'UTF-8' | 'UTF-16LE' | 'UTF-16BE' when the bytes start with that BOM, else null. */
  export function getBOMEncoding(bytes: Uint8Array): string | null;
  /** Decodes with a canonical name (handles x-user-defined, which iconv-lite lacks); throws on unsupported names. */
  export function decode(bytes: Uint8Array, fallbackEncodingName: string): string;
}

declare module 'html-encoding-sniffer' {
  /**
   * The HTML encoding sniffing algorithm: BOM → transport label → `<meta>` prescan of the first 1024 bytes →
   * `defaultEncoding`. Passing `defaultEncoding: null` makes "nothing found" observable as null.
   */
  function sniffHtmlEncoding(bytes: Uint8Array, options?: { transportLayerEncodingLabel?: string; defaultEncoding?: string | null }): string | null;
  export = sniffHtmlEncoding;
}
