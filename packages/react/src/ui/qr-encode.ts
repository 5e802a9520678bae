/**
 * A small QR code encoder (ISO/IEC 18004): byte mode, error correction M (L when M does not fit),
 * versions 1–10 (up to 271 bytes), enough for an otpauth:// URL. Drawn in the browser, so a TOTP
 * secret never goes to a QR service. No dependencies.
 */

/** Per version 1–10: [blocks, total codewords, data codewords] groups, for levels L and M. */
const BLOCKS: Record<'L' | 'M', number[][]> = {
  L: [
    [1, 26, 19],
    [1, 44, 34],
    [1, 70, 55],
    [1, 100, 80],
    [1, 134, 108],
    [2, 86, 68],
    [2, 98, 78],
    [2, 121, 97],
    [2, 146, 116],
    [2, 86, 68, 2, 87, 69],
  ],
  M: [
    [1, 26, 16],
    [1, 44, 28],
    [1, 70, 44],
    [2, 50, 32],
    [2, 67, 43],
    [4, 43, 27],
    [4, 49, 31],
    [2, 60, 38, 2, 61, 39],
    [3, 58, 36, 2, 59, 37],
    [4, 69, 43, 1, 70, 44],
  ],
};
const ALIGNMENT = [[], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50]];
const LEVEL_BITS = { L: 1, M: 0 } as const;

// ---- GF(256), polynomial 0x11d
const EXP = new Uint8Array(512);
const LOG = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++, x = (x << 1) ^ (x & 0x80 ? 0x11d : 0)) {
  EXP[i] = x;
  LOG[x] = i;
}
for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255]!;
const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : EXP[LOG[a]! + LOG[b]!]!);

/** The error-correction codewords of `data` (Reed–Solomon, `n` of them). */
function ecCodewords(data: number[], n: number): number[] {
  let generator = [1];
  for (let i = 0; i < n; i++) {
    const next = new Array<number>(generator.length + 1).fill(0);
    generator.forEach((g, j) => {
      next[j] = next[j]! ^ g;
      next[j + 1] = next[j + 1]! ^ mul(g, EXP[i]!);
    });
    generator = next;
  }
  const remainder = [...data, ...new Array<number>(n).fill(0)];
  for (let i = 0; i < data.length; i++) {
    const factor = remainder[i]!;
    if (factor !== 0) generator.forEach((g, j) => (remainder[i + j] = remainder[i + j]! ^ mul(g, factor)));
  }
  return remainder.slice(data.length);
}

function blocksOf(level: 'L' | 'M', version: number): { total: number; data: number }[] {
  const row = BLOCKS[level][version - 1]!;
  const blocks = [];
  for (let i = 0; i < row.length; i += 3) for (let k = 0; k < row[i]!; k++) blocks.push({ total: row[i + 1]!, data: row[i + 2]! });
  return blocks;
}

/** The final codeword sequence: data in byte mode, padded, split in blocks, interleaved with their EC. */
function codewords(bytes: Uint8Array, level: 'L' | 'M', version: number): number[] {
  const blocks = blocksOf(level, version);
  const capacity = blocks.reduce((n, b) => n + b.data, 0);
  const bits: number[] = [];
  const put = (value: number, length: number) => {
    for (let i = length - 1; i >= 0; i--) bits.push((value >>> i) & 1);
  };
  put(0b0100, 4);
  put(bytes.length, version < 10 ? 8 : 16);
  for (const b of bytes) put(b, 8);
  put(0, Math.min(4, capacity * 8 - bits.length));
  while (bits.length % 8) bits.push(0);
  const data: number[] = [];
  for (let i = 0; i < bits.length; i += 8) data.push(bits.slice(i, i + 8).reduce((n, bit) => (n << 1) | bit, 0));
  for (let pad = 0xec; data.length < capacity; pad ^= 0xec ^ 0x11) data.push(pad);

  const split: { data: number[]; ec: number[] }[] = [];
  let offset = 0;
  for (const block of blocks) {
    const part = data.slice(offset, offset + block.data);
    offset += block.data;
    split.push({ data: part, ec: ecCodewords(part, block.total - block.data) });
  }
  const out: number[] = [];
  const longest = Math.max(...split.map((b) => b.data.length));
  for (let i = 0; i < longest; i++) for (const b of split) if (i < b.data.length) out.push(b.data[i]!);
  for (let i = 0; i < split[0]!.ec.length; i++) for (const b of split) out.push(b.ec[i]!);
  return out;
}

/** The remainder of `value` shifted by the generator's degree, BCH-style (format and version bits). */
function bch(value: number, generator: number): number {
  const degree = Math.floor(Math.log2(generator));
  let r = value << degree;
  while (r >= 1 << degree) r ^= generator << (Math.floor(Math.log2(r)) - degree);
  return (value << degree) | r;
}

const MASKS: ((r: number, c: number) => boolean)[] = [
  (r, c) => (r + c) % 2 === 0,
  (r) => r % 2 === 0,
  (_, c) => c % 3 === 0,
  (r, c) => (r + c) % 3 === 0,
  (r, c) => (Math.floor(r / 2) + Math.floor(c / 3)) % 2 === 0,
  (r, c) => ((r * c) % 2) + ((r * c) % 3) === 0,
  (r, c) => (((r * c) % 2) + ((r * c) % 3)) % 2 === 0,
  (r, c) => (((r + c) % 2) + ((r * c) % 3)) % 2 === 0,
];

class Matrix {
  readonly size: number;
  readonly dark: boolean[][];
  /** Function patterns: never masked, never holding data. */
  readonly reserved: boolean[][];
  constructor(readonly version: number) {
    this.size = 17 + 4 * version;
    this.dark = Array.from({ length: this.size }, () => new Array<boolean>(this.size).fill(false));
    this.reserved = Array.from({ length: this.size }, () => new Array<boolean>(this.size).fill(false));
  }
  set(r: number, c: number, dark: boolean): void {
    this.dark[r]![c] = dark;
    this.reserved[r]![c] = true;
  }
}

function functionPatterns(m: Matrix): void {
  const n = m.size;
  for (const [r0, c0] of [
    [0, 0],
    [0, n - 7],
    [n - 7, 0],
  ] as const) {
    for (let r = -1; r <= 7; r++)
      for (let c = -1; c <= 7; c++) {
        const rr = r0 + r;
        const cc = c0 + c;
        if (rr < 0 || cc < 0 || rr >= n || cc >= n) continue;
        const ring = Math.max(Math.abs(r - 3), Math.abs(c - 3));
        m.set(rr, cc, ring !== 2 && ring !== 4);
      }
  }
  const centers = ALIGNMENT[m.version - 1]!;
  for (const r of centers)
    for (const c of centers) {
      if (m.reserved[r]![c]) continue; // overlaps a finder
      for (let dr = -2; dr <= 2; dr++) for (let dc = -2; dc <= 2; dc++) m.set(r + dr, c + dc, Math.max(Math.abs(dr), Math.abs(dc)) !== 1);
    }
  for (let i = 8; i < n - 8; i++) {
    m.set(6, i, i % 2 === 0);
    m.set(i, 6, i % 2 === 0);
  }
  m.set(n - 8, 8, true); // the dark module
  // Format and version areas, reserved now, written per mask.
  formatBits(m, 'M', 0);
  versionBits(m);
}

function formatBits(m: Matrix, level: 'L' | 'M', mask: number): void {
  const bits = bch((LEVEL_BITS[level] << 3) | mask, 0x537) ^ 0x5412;
  const n = m.size;
  const bit = (i: number) => ((bits >>> i) & 1) === 1;
  for (let i = 0; i <= 5; i++) m.set(i, 8, bit(i));
  m.set(7, 8, bit(6));
  m.set(8, 8, bit(7));
  m.set(8, 7, bit(8));
  for (let i = 9; i < 15; i++) m.set(8, 14 - i, bit(i));
  for (let i = 0; i < 8; i++) m.set(8, n - 1 - i, bit(i));
  for (let i = 8; i < 15; i++) m.set(n - 15 + i, 8, bit(i));
  m.set(n - 8, 8, true);
}

function versionBits(m: Matrix): void {
  if (m.version < 7) return;
  const bits = bch(m.version, 0x1f25);
  for (let i = 0; i < 18; i++) {
    const dark = ((bits >>> i) & 1) === 1;
    const a = Math.floor(i / 3);
    const b = (i % 3) + m.size - 11;
    m.set(a, b, dark);
    m.set(b, a, dark);
  }
}

function placeData(m: Matrix, data: number[]): void {
  const n = m.size;
  let index = 0;
  let upward = true;
  for (let right = n - 1; right >= 1; right -= 2) {
    if (right === 6) right = 5;
    for (let step = 0; step < n; step++) {
      const r = upward ? n - 1 - step : step;
      for (const c of [right, right - 1]) {
        if (m.reserved[r]![c]) continue;
        const byte = data[index >>> 3];
        m.dark[r]![c] = byte !== undefined && ((byte >>> (7 - (index & 7))) & 1) === 1;
        index++;
      }
    }
    upward = !upward;
  }
}

/** The standard penalty (rules 1–4): the mask with the least is the easiest to read. */
function penalty(d: boolean[][]): number {
  const n = d.length;
  let score = 0;
  const line = (get: (i: number, j: number) => boolean) => {
    for (let i = 0; i < n; i++) {
      let run = 1;
      for (let j = 1; j <= n; j++) {
        if (j < n && get(i, j) === get(i, j - 1)) run++;
        else {
          if (run >= 5) score += run - 2;
          run = 1;
        }
      }
      for (let j = 0; j + 10 < n; j++) {
        const s = Array.from({ length: 11 }, (_, k) => get(i, j + k));
        const pattern = [true, false, true, true, true, false, true];
        const finderThenLight = pattern.every((p, k) => s[k] === p) && s.slice(7).every((x) => !x);
        const lightThenFinder = s.slice(0, 4).every((x) => !x) && pattern.every((p, k) => s[k + 4] === p);
        if (finderThenLight || lightThenFinder) score += 40;
      }
    }
  };
  line((i, j) => d[i]![j]!);
  line((i, j) => d[j]![i]!);
  let dark = 0;
  for (let r = 0; r < n; r++)
    for (let c = 0; c < n; c++) {
      if (d[r]![c]) dark++;
      if (r + 1 < n && c + 1 < n && d[r]![c] === d[r + 1]![c] && d[r]![c] === d[r]![c + 1] && d[r]![c] === d[r + 1]![c + 1]) score += 3;
    }
  score += Math.floor(Math.abs((dark * 100) / (n * n) - 50) / 5) * 10;
  return score;
}

/** The QR code of `text` as rows of modules (true: dark), without the quiet zone. */
export function encodeQr(text: string): boolean[][] {
  const bytes = new TextEncoder().encode(text);
  for (const level of ['M', 'L'] as const)
    for (let version = 1; version <= 10; version++) {
      const capacity = blocksOf(level, version).reduce((n, b) => n + b.data, 0);
      if (bytes.length + (version < 10 ? 2 : 3) > capacity) continue;
      const data = codewords(bytes, level, version);
      let best: { score: number; dark: boolean[][] } | undefined;
      for (let mask = 0; mask < 8; mask++) {
        const m = new Matrix(version);
        functionPatterns(m);
        placeData(m, data);
        for (let r = 0; r < m.size; r++)
          for (let c = 0; c < m.size; c++) if (!m.reserved[r]![c] && MASKS[mask]!(r, c)) m.dark[r]![c] = !m.dark[r]![c];
        formatBits(m, level, mask);
        const score = penalty(m.dark);
        if (!best || score < best.score) best = { score, dark: m.dark };
      }
      return best!.dark;
    }
  throw new Error('Too long for a QR code here (at most 271 bytes).');
}
