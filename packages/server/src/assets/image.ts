/**
 * Image sniffing for uploads: the type from the magic bytes and the pixel dimensions from the
 * headers, for PNG, JPEG and WebP. Hand-written so that no decoder ever touches hostile bytes:
 * nothing is decompressed, every read is bounds-checked, and every loop advances by a length that
 * was checked against the buffer first.
 */

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** 1 MB, counted in binary units (1,048,576 bytes). */
export const MAX_IMAGE_BYTES = 1_048_576;
export const MAX_IMAGE_DIMENSION = 4096;

export const TYPE_NAMES: Record<ImageType, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/webp': 'WebP' };

export function isImageType(value: string): value is ImageType {
  return (IMAGE_TYPES as readonly string[]).includes(value);
}

export interface ImageInfo {
  type: ImageType;
  width: number;
  height: number;
}

/**
 * - `unrecognized`: not a PNG, JPEG or WebP at all;
 * - `malformed`: the structure is broken, or there are bytes after the image's end (a polyglot);
 * - `truncated`: the bytes end before the image does (for a prefix: more bytes are needed);
 * - `too_large`: a dimension is above MAX_IMAGE_DIMENSION;
 * - `unsupported`: a real image in a variant that is not accepted (animation, lossless JPEG…).
 */
export type ImageProblem = 'unrecognized' | 'malformed' | 'truncated' | 'too_large' | 'unsupported';

export type InspectResult = { ok: true; image: ImageInfo } | { ok: false; problem: ImageProblem; detail: string };

/**
 * `complete`: the bytes are the whole file; its structure is walked to the end and anything after
 * the end marker is refused. `prefix`: the bytes are the first part of a file (a ranged read);
 * only the type and dimensions are read.
 */
export type InspectMode = 'complete' | 'prefix';

export function detectImageType(bytes: Uint8Array): ImageType | null {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return 'image/webp';
  return null;
}

/** A short description of what unrecognized bytes look like, for error messages. */
export function describeUnrecognized(bytes: Uint8Array): string {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length && i < 64 && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  if (bytes[i] === 0x3c /* < */) return 'text markup (SVG, HTML or XML)';
  if (bytes.length >= 6 && ascii(bytes, 0, 3) === 'GIF') return 'a GIF image';
  return 'neither a PNG, a JPEG nor a WebP image';
}

export function inspectImage(bytes: Uint8Array, mode: InspectMode = 'complete'): InspectResult {
  const type = detectImageType(bytes);
  if (type === null) return fail('unrecognized', `the bytes are ${describeUnrecognized(bytes)}`);
  try {
    const image = type === 'image/png' ? readPng(bytes, mode) : type === 'image/jpeg' ? readJpeg(bytes, mode) : readWebp(bytes, mode);
    if (image.width < 1 || image.height < 1) throw new Problem('malformed', 'the image declares a zero width or height');
    if (image.width > MAX_IMAGE_DIMENSION || image.height > MAX_IMAGE_DIMENSION) {
      throw new Problem(
        'too_large',
        `the image is ${image.width}×${image.height} pixels; at most ${MAX_IMAGE_DIMENSION}×${MAX_IMAGE_DIMENSION} is accepted`,
      );
    }
    return { ok: true, image };
  } catch (error) {
    if (error instanceof Problem) return fail(error.problem, error.message);
    throw error;
  }
}

class Problem extends Error {
  constructor(
    readonly problem: ImageProblem,
    detail: string,
  ) {
    super(detail);
  }
}

function fail(problem: ImageProblem, detail: string): InspectResult {
  return { ok: false, problem, detail };
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

/** Bounds-checked readers: a read past the end is a truncation, never an undefined value. */
class Reader {
  constructor(
    readonly bytes: Uint8Array,
    readonly what: string,
  ) {}
  get length(): number {
    return this.bytes.length;
  }
  need(offset: number, count: number): void {
    if (offset < 0 || count < 0 || offset + count > this.bytes.length) {
      throw new Problem('truncated', `the ${this.what} data ends early (at byte ${this.bytes.length})`);
    }
  }
  u8(offset: number): number {
    this.need(offset, 1);
    return this.bytes[offset]!;
  }
  u16be(offset: number): number {
    this.need(offset, 2);
    return (this.bytes[offset]! << 8) | this.bytes[offset + 1]!;
  }
  u16le(offset: number): number {
    this.need(offset, 2);
    return this.bytes[offset]! | (this.bytes[offset + 1]! << 8);
  }
  u24le(offset: number): number {
    this.need(offset, 3);
    return this.bytes[offset]! | (this.bytes[offset + 1]! << 8) | (this.bytes[offset + 2]! << 16);
  }
  u32be(offset: number): number {
    this.need(offset, 4);
    return (
      ((this.bytes[offset]! << 24) >>> 0) + ((this.bytes[offset + 1]! << 16) | (this.bytes[offset + 2]! << 8) | this.bytes[offset + 3]!)
    );
  }
  u32le(offset: number): number {
    this.need(offset, 4);
    return (
      ((this.bytes[offset + 3]! << 24) >>> 0) + ((this.bytes[offset + 2]! << 16) | (this.bytes[offset + 1]! << 8) | this.bytes[offset]!)
    );
  }
  fourcc(offset: number): string {
    this.need(offset, 4);
    return ascii(this.bytes, offset, 4);
  }
}

// ---- PNG ------------------------------------------------------------------------------------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const PNG_COLOR_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function readPng(bytes: Uint8Array, mode: InspectMode): ImageInfo {
  const r = new Reader(bytes, 'PNG');
  // The first chunk must be IHDR, 13 bytes long.
  if (r.u32be(8) !== 13 || r.fourcc(12) !== 'IHDR') throw new Problem('malformed', 'the PNG does not start with an IHDR chunk');
  const width = r.u32be(16);
  const height = r.u32be(20);
  const depth = r.u8(24);
  const colorType = r.u8(25);
  if (!PNG_COLOR_DEPTHS[colorType]?.includes(depth) || r.u8(26) !== 0 || r.u8(27) !== 0 || r.u8(28) > 1) {
    throw new Problem('malformed', 'the PNG header (IHDR) has an invalid bit depth, color type or method');
  }
  if (width > 0x7fffffff || height > 0x7fffffff) throw new Problem('malformed', 'the PNG declares a size beyond what PNG allows');
  const image: ImageInfo = { type: 'image/png', width, height };
  if (mode === 'prefix') return image;

  // Walk every chunk with its CRC; IEND must end the file exactly.
  let offset = 8;
  let sawData = false;
  for (;;) {
    const length = r.u32be(offset);
    if (length > 0x7fffffff) throw new Problem('malformed', `a PNG chunk at byte ${offset} declares an impossible length`);
    const type = r.fourcc(offset + 4);
    if (!/^[A-Za-z]{4}$/.test(type)) throw new Problem('malformed', `the PNG has an invalid chunk type at byte ${offset}`);
    r.need(offset + 8, length + 4);
    const stored = r.u32be(offset + 8 + length);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== stored) {
      throw new Problem('malformed', `the PNG chunk ${type} at byte ${offset} fails its CRC check`);
    }
    if (type === 'IHDR' && offset !== 8) throw new Problem('malformed', 'the PNG has a second IHDR chunk');
    if (type === 'IDAT') sawData = true;
    offset += 12 + length;
    if (type === 'IEND') {
      if (!sawData) throw new Problem('malformed', 'the PNG has no image data (IDAT)');
      if (length !== 0) throw new Problem('malformed', 'the PNG IEND chunk is not empty');
      if (offset !== bytes.length) {
        throw new Problem('malformed', `${bytes.length - offset} bytes follow the end of the PNG (IEND); appended data is refused`);
      }
      return image;
    }
  }
}

// ---- JPEG -----------------------------------------------------------------------------------

// Baseline, extended sequential and progressive Huffman JPEG: what every browser renders.
const ACCEPTED_SOF = new Set([0xc0, 0xc1, 0xc2]);
// Lossless, hierarchical and arithmetic-coded frames.
const OTHER_SOF = new Set([0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function readJpeg(bytes: Uint8Array, mode: InspectMode): ImageInfo {
  const r = new Reader(bytes, 'JPEG');
  let image: ImageInfo | null = null;
  let sawScan = false;
  let offset = 2; // after SOI

  for (;;) {
    if (r.u8(offset) !== 0xff) throw new Problem('malformed', `the JPEG has no marker where one must be, at byte ${offset}`);
    while (r.u8(offset) === 0xff) offset++; // fill bytes
    const marker = r.u8(offset);
    offset++;

    if (marker === 0xd9) {
      // EOI
      if (!image || !sawScan) throw new Problem('malformed', 'the JPEG ends before any image data');
      if (offset !== bytes.length) {
        throw new Problem('malformed', `${bytes.length - offset} bytes follow the end of the JPEG (EOI); appended data is refused`);
      }
      return image;
    }
    if (marker === 0x00 || marker === 0xd8) throw new Problem('malformed', `the JPEG has an invalid marker at byte ${offset - 1}`);
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue; // markers without a length

    const length = r.u16be(offset);
    if (length < 2) throw new Problem('malformed', `a JPEG segment at byte ${offset} declares an impossible length`);
    r.need(offset, length);

    if (ACCEPTED_SOF.has(marker) || OTHER_SOF.has(marker)) {
      if (!ACCEPTED_SOF.has(marker)) {
        throw new Problem(
          'unsupported',
          'the JPEG is lossless, hierarchical or arithmetic-coded; save it as a baseline or progressive JPEG',
        );
      }
      if (image) throw new Problem('malformed', 'the JPEG has more than one frame header');
      const components = r.u8(offset + 7);
      if (length !== 8 + 3 * components || components < 1) throw new Problem('malformed', 'the JPEG frame header is malformed');
      const height = r.u16be(offset + 3);
      const width = r.u16be(offset + 5);
      if (height === 0) throw new Problem('unsupported', 'the JPEG defines its height after the first scan (DNL), which is not accepted');
      image = { type: 'image/jpeg', width, height };
      if (mode === 'prefix') return image;
    }
    offset += length;

    if (marker === 0xda) {
      // SOS: entropy-coded data follows, up to the next marker that is not a stuffed byte or a restart.
      if (!image) throw new Problem('malformed', 'the JPEG has scan data before its frame header');
      sawScan = true;
      for (;;) {
        if (r.u8(offset) !== 0xff) {
          offset++;
          continue;
        }
        const next = r.u8(offset + 1);
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) offset += 2;
        else if (next === 0xff) offset += 1;
        else break;
      }
    }
  }
}

// ---- WebP -----------------------------------------------------------------------------------

const VP8X_ANIMATION = 0x02;

function readVp8(r: Reader, offset: number, size: number): { width: number; height: number } {
  if (size < 10) throw new Problem('malformed', 'the WebP VP8 chunk is too short');
  const tag = r.u24le(offset);
  if ((tag & 1) !== 0) throw new Problem('malformed', 'the WebP VP8 data does not start with a key frame');
  if (tag >>> 5 > size) throw new Problem('malformed', 'the WebP VP8 first partition is larger than its chunk');
  if (r.u8(offset + 3) !== 0x9d || r.u8(offset + 4) !== 0x01 || r.u8(offset + 5) !== 0x2a) {
    throw new Problem('malformed', 'the WebP VP8 start code is missing');
  }
  return { width: r.u16le(offset + 6) & 0x3fff, height: r.u16le(offset + 8) & 0x3fff };
}

function readVp8l(r: Reader, offset: number, size: number): { width: number; height: number } {
  if (size < 5 || r.u8(offset) !== 0x2f) throw new Problem('malformed', 'the WebP VP8L signature is missing');
  const bits = r.u32le(offset + 1);
  if (bits >>> 29 !== 0) throw new Problem('malformed', 'the WebP VP8L version is not 0');
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

function readWebp(bytes: Uint8Array, mode: InspectMode): ImageInfo {
  const r = new Reader(bytes, 'WebP');
  const riffEnd = 8 + r.u32le(4);
  if (mode === 'complete') {
    if (riffEnd > bytes.length) throw new Problem('truncated', `the WebP declares ${riffEnd} bytes but has ${bytes.length}`);
    if (riffEnd < bytes.length) {
      throw new Problem('malformed', `${bytes.length - riffEnd} bytes follow the end of the WebP (RIFF) data; appended data is refused`);
    }
  }

  const first = r.fourcc(12);
  const firstSize = r.u32le(16);
  let image: ImageInfo;
  if (first === 'VP8 ' || first === 'VP8L') {
    image = { type: 'image/webp', ...(first === 'VP8 ' ? readVp8(r, 20, firstSize) : readVp8l(r, 20, firstSize)) };
  } else if (first === 'VP8X') {
    if (firstSize !== 10) throw new Problem('malformed', 'the WebP VP8X chunk has the wrong size');
    if (r.u8(20) & VP8X_ANIMATION) throw new Problem('unsupported', 'animated WebP images are not accepted; upload a still image');
    image = { type: 'image/webp', width: r.u24le(24) + 1, height: r.u24le(27) + 1 };
  } else {
    throw new Problem('malformed', `the WebP starts with an unknown chunk "${first}"`);
  }
  if (mode === 'prefix') return image;

  // Walk the chunks to the RIFF end; an extended file must carry exactly one frame of canvas size.
  let offset = 12;
  let frames = 0;
  let chunks = 0;
  while (offset < riffEnd) {
    const fourcc = r.fourcc(offset);
    const size = r.u32le(offset + 4);
    r.need(offset + 8, size);
    chunks++;
    if (first === 'VP8X' && chunks > 1) {
      if (fourcc === 'ANIM' || fourcc === 'ANMF')
        throw new Problem('unsupported', 'animated WebP images are not accepted; upload a still image');
      if (fourcc === 'VP8 ' || fourcc === 'VP8L') {
        const frame = fourcc === 'VP8 ' ? readVp8(r, offset + 8, size) : readVp8l(r, offset + 8, size);
        if (frame.width !== image.width || frame.height !== image.height) {
          throw new Problem('malformed', 'the WebP frame size differs from its canvas size');
        }
        frames++;
      }
    }
    offset += 8 + size + (size & 1);
  }
  if (offset !== riffEnd) throw new Problem('malformed', 'the last WebP chunk runs past the end of the RIFF data');
  if (first !== 'VP8X' && chunks !== 1) throw new Problem('malformed', 'a simple WebP file must hold exactly one chunk');
  if (first === 'VP8X' && frames !== 1) throw new Problem('malformed', 'the extended WebP does not hold exactly one image frame');
  return image;
}
