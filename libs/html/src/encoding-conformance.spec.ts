/**
 * html5lib-tests encoding cases (test-fixtures/html5lib-encoding-cases.json; provenance and MIT licence in
 * test-fixtures/LICENSE-NOTE.txt) run through decodeHtml with no Content-Type, as the suite's harness
 * assumes. Asserted: the 76 of 83 cases whose answer lies in the first 1024 bytes (`prescanSufficient`).
 * Reached: 75/76 — the prescan itself finds all 76 declarations; one is then overruled on purpose.
 *
 * Deliberate differences (KNOWN_DIFFERENCES pins each one):
 * - test-yahoo-jp.dat#1 declares euc-jp, but the fixture's bytes are UTF-8 (the .dat file was saved as
 *   UTF-8), so decoding as EUC-JP yields mojibake; decodeHtml's "declared legacy, bytes valid UTF-8" rule
 *   answers UTF-8 and the Japanese text comes out right. The prescan's EUC-JP is asserted separately.
 * - scripted/tests1.dat#1 declares its charset through document.write; a crawler runs no scripts, so
 *   windows-1252 is expected, as the fixture's `requiresScripting` note says (counted as a pass).
 * - tests1.dat#48–#54 (not asserted, reported) put the meta past byte 1024, where html5lib finds it only
 *   by re-parsing during tree construction; a 1024-byte prescan misses it and the body falls through to
 *   detection / the windows-1252 default (0/7; the ASCII bodies decode identically anyway).
 * Detection (chardet) runs where the suite's harness assumes none; it changes no asserted answer: the
 * cases without a declaration are pure ASCII, which skips detection.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getBOMEncoding } from 'whatwg-encoding';
import { decodeHtml, prescanMetaCharset } from './charset-decoder';

interface EncodingCase {
  id: string;
  expectedWhatwgName: string;
  prescanSufficient: boolean;
  requiresScripting: boolean;
  dataBase64: string;
}

/** Reached when this suite was written; raise it when the decoder improves, never lower it. */
const PRESCAN_BASELINE = 75;
/** Case id → the answer decodeHtml gives on purpose (see above). */
const KNOWN_DIFFERENCES: Record<string, string> = { 'test-yahoo-jp.dat#1': 'UTF-8' };

const fixture = join(__dirname, '..', 'test-fixtures', 'html5lib-encoding-cases.json');
const cases: EncodingCase[] = JSON.parse(readFileSync(fixture, 'utf8')).cases;

function outcome(c: EncodingCase): { id: string; expected: string; got: string; pass: boolean } {
  const expected = c.requiresScripting ? 'windows-1252' : c.expectedWhatwgName;
  const got = decodeHtml(Buffer.from(c.dataBase64, 'base64')).charset;
  return { id: c.id, expected, got, pass: got.toLowerCase() === expected.toLowerCase() };
}

const prescan = cases.filter((c) => c.prescanSufficient).map(outcome);
const beyondPrescan = cases.filter((c) => !c.prescanSufficient).map(outcome);
const passed = prescan.filter((o) => o.pass).length;
const passedBeyond = beyondPrescan.filter((o) => o.pass).length;

describe('html5lib encoding sniffing conformance', () => {
  it('has the expected fixture', () => {
    expect(cases).toHaveLength(83);
    expect(prescan).toHaveLength(76);
  });

  it(`passes ${passed}/${prescan.length} prescan cases (baseline ${PRESCAN_BASELINE})`, () => {
    expect(passed).toBeGreaterThanOrEqual(PRESCAN_BASELINE);
    // Every failure is a documented one, with the documented answer (this names any regression).
    const unexplained = prescan.filter((o) => !o.pass && KNOWN_DIFFERENCES[o.id] !== o.got);
    expect(unexplained).toEqual([]);
  });

  it('finds every declaration in the prescan, including the EUC-JP that decodeHtml overrules', () => {
    for (const c of cases.filter((c) => c.prescanSufficient && !c.requiresScripting)) {
      const bytes = Buffer.from(c.dataBase64, 'base64');
      if (getBOMEncoding(bytes)) continue; // decided before the prescan runs
      expect({ id: c.id, got: prescanMetaCharset(bytes) ?? 'windows-1252' }).toEqual({
        id: c.id,
        got: c.expectedWhatwgName,
      });
    }
  });

  it(`reports the meta-past-1024-bytes cases: ${passedBeyond}/${beyondPrescan.length} (not asserted)`, () => {
    // Without the late meta these bodies fall to the default, which is what a 1024-byte prescan yields.
    for (const o of beyondPrescan) expect(o.pass || o.got === 'windows-1252').toBe(true);
  });
});
