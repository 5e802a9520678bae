import { describe, expect, it } from 'vitest';
import { encodeQr } from '../src/ui/qr.js';

/**
 * The QR encoder the TOTP setup draws with (src/ui/qr-encode.ts). The pinned matrix below was read
 * back by a QR decoder (jsQR) when it was written; the structure checks hold for every version it
 * makes, so a change that breaks the code fails here, not in a user's authenticator app.
 */
const PINNED = [
  '#######.#..#.#.#.#....#######',
  '#.....#..##.#....#..#.#.....#',
  '#.###.#.##..#######.#.#.###.#',
  '#.###.#...##..##.##...#.###.#',
  '#.###.#..#.##.##.##...#.###.#',
  '#.....#.###..#..#.#.#.#.....#',
  '#######.#.#.#.#.#.#.#.#######',
  '.........#....#.#.#.#........',
  '#.#...##.####.###..##..#..#.#',
  '#..###...##.#.#.#.######....#',
  '#....##..##...####.#..#...#.#',
  '....##.#...##.#....#...###...',
  '.###.###..##.#.#..##..##...##',
  '.##..#.##.#.#.#.########.#.##',
  '..#.#.#####.######.#.####.#.#',
  '....#...#.#.#...#.###..#.#...',
  '#.#..####...##.###...##.....#',
  '.####...#..#.##.##.#..##.#.##',
  '#######.#..#.###..###....##.#',
  '..#.##...#.##..#...#.#####.##',
  '###...######.#.#.#.#######...',
  '........###.#.##....#...#.#.#',
  '#######.########..#.#.#.###.#',
  '#.....#...#........##...#...#',
  '#.###.#....#.##..#.######..#.',
  '#.###.#..#.#.#..#.#.##..#.#.#',
  '#.###.#.#.###..#..##.#####.##',
  '#.....#..##..####.###..##....',
  '#######.#..#...#.#.##.#..#..#',
];

const text = (rows: boolean[][]) => rows.map((r) => r.map((d) => (d ? '#' : '.')).join(''));

/** The 15 format bits around the top-left finder, as ISO/IEC 18004 places them. */
function formatBits(m: boolean[][]): number {
  const cells: [number, number][] = [
    [0, 8],
    [1, 8],
    [2, 8],
    [3, 8],
    [4, 8],
    [5, 8],
    [7, 8],
    [8, 8],
    [8, 7],
    [8, 5],
    [8, 4],
    [8, 3],
    [8, 2],
    [8, 1],
    [8, 0],
  ];
  return cells.reduce((bits, [r, c], i) => bits | ((m[r]![c] ? 1 : 0) << i), 0);
}

/** Every valid format word: level (2 bits) and mask (3), BCH(15,5), masked with 0x5412. */
function formatWord(level: number, mask: number): number {
  const data = (level << 3) | mask;
  let rem = data;
  for (let i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >>> 9) * 0x537);
  return ((data << 10) | (rem & 0x3ff)) ^ 0x5412;
}

describe('the QR encoder', () => {
  it('encodes an otpauth URL to the matrix a decoder read back', () => {
    expect(text(encodeQr('otpauth://totp/A:b?secret=JBSWY3DPEHPK3PXP'))).toEqual(PINNED);
  });

  it.each([
    ['a short text', 'hi', 21],
    ['a typical otpauth URL', 'otpauth://totp/Acme%20Inc:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme%20Inc', 41],
    ['a long URL (level L, version 10)', 'x'.repeat(260), 57],
  ])('%s: finder patterns, timing, the dark module and a valid format word', (_, value, size) => {
    const m = encodeQr(value);
    expect(m).toHaveLength(size);
    const finder = ['#######', '#.....#', '#.###.#', '#.###.#', '#.###.#', '#.....#', '#######'];
    for (const [r0, c0] of [
      [0, 0],
      [0, size - 7],
      [size - 7, 0],
    ] as const) {
      expect(m.slice(r0, r0 + 7).map((row) => text([row.slice(c0, c0 + 7)])[0])).toEqual(finder);
    }
    for (let i = 8; i < size - 8; i++) {
      expect(m[6]![i]).toBe(i % 2 === 0);
      expect(m[i]![6]).toBe(i % 2 === 0);
    }
    expect(m[size - 8]![8]).toBe(true);
    const valid = [0, 1].flatMap((level) => [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => formatWord(level, mask)));
    expect(valid).toContain(formatBits(m));
  });

  it('refuses what does not fit rather than drawing a wrong code', () => {
    expect(() => encodeQr('y'.repeat(400))).toThrow(/Too long/);
  });
});
