import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { crc32 } from '../../src/assets/image.js';

/** A PNG chunk: length, type, data, CRC. */
export function pngChunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A real RGB PNG of the given size, deflated with node:zlib. `seed` varies the pixels so tests
 * get distinct files (and hashes). With `headerOnly`, the image data does not match the header:
 * enough for a pixel-flood header (65535×65535) without allocating the pixels.
 */
export function makePng(width: number, height: number, options: { seed?: number; headerOnly?: boolean } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  let raw: Buffer;
  if (options.headerOnly) {
    raw = Buffer.alloc(16);
  } else {
    const row = 1 + width * 3;
    raw = Buffer.alloc(row * height);
    const seed = options.seed ?? 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const at = y * row + 1 + x * 3;
        raw[at] = (x * 40 + seed) & 0xff;
        raw[at + 1] = (y * 40 + seed * 7) & 0xff;
        raw[at + 2] = (seed * 13) & 0xff;
      }
    }
  }
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
}

const FIXTURES = new URL('../fixtures/', import.meta.url);

/** Real files made by cjpeg/cwebp (libjpeg-turbo, libwebp) and checked with djpeg/dwebp; all 5×3. */
export const fixtures = {
  baselineJpeg: () => readFileSync(new URL('baseline.jpg', FIXTURES)),
  progressiveJpeg: () => readFileSync(new URL('progressive.jpg', FIXTURES)),
  lossyWebp: () => readFileSync(new URL('lossy-vp8.webp', FIXTURES)),
  losslessWebp: () => readFileSync(new URL('lossless-vp8l.webp', FIXTURES)),
  extendedWebp: () => readFileSync(new URL('extended-vp8x.webp', FIXTURES)),
};
export const FIXTURE_SIZE = { width: 5, height: 3 };

export const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="5" height="3"><script>alert(document.cookie)</script></svg>\n',
);

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
