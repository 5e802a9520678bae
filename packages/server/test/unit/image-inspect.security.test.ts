import { describe, expect, it } from 'vitest';
import { inspectImage, type InspectResult } from '../../src/assets/image.js';
import { FIXTURE_SIZE, fixtures, makePng, PNG_SIGNATURE, pngChunk, SVG } from '../helpers/images.js';

function problem(result: InspectResult): string {
  return result.ok ? 'ok' : result.problem;
}

const real = {
  png: () => makePng(5, 3),
  baselineJpeg: fixtures.baselineJpeg,
  progressiveJpeg: fixtures.progressiveJpeg,
  lossyWebp: fixtures.lossyWebp,
  losslessWebp: fixtures.losslessWebp,
  extendedWebp: fixtures.extendedWebp,
};
const typeOf = (name: string) => (name === 'png' ? 'image/png' : name.endsWith('Jpeg') ? 'image/jpeg' : 'image/webp');

describe('image inspection', () => {
  it.each(Object.entries(real))('reads the type and size of a real %s, whole and from a prefix', (name, make) => {
    const bytes = make();
    const expected = { ok: true, image: { type: typeOf(name), ...FIXTURE_SIZE } };
    expect(inspectImage(bytes)).toEqual(expected);
    // S3 verification reads a prefix; the whole file is a valid prefix of itself.
    expect(inspectImage(bytes, 'prefix')).toEqual(expected);
  });

  it.each(Object.entries(real))('refuses every truncation of a real %s', (_name, make) => {
    const bytes = make();
    for (let length = 0; length < bytes.length; length++) {
      const result = inspectImage(bytes.subarray(0, length));
      expect(result.ok, `truncated to ${length} bytes`).toBe(false);
    }
  });

  it.each(Object.entries(real))('refuses a %s with a script appended (polyglot), rather than stripping it', (_name, make) => {
    const polyglot = Buffer.concat([make(), Buffer.from('<script>alert(1)</script>')]);
    const result = inspectImage(polyglot);
    expect(problem(result)).toBe('malformed');
    expect(result.ok || result.detail).toMatch(/appended data is refused/);
  });

  it('refuses SVG and HTML, also behind a BOM or whitespace, naming what they look like', () => {
    for (const bytes of [SVG, Buffer.from('\ufeff  <html><script>x</script></html>'), Buffer.from('GIF89a\x01\x00\x01\x00')]) {
      const result = inspectImage(bytes);
      expect(problem(result)).toBe('unrecognized');
    }
    expect(inspectImage(SVG).ok || (inspectImage(SVG) as { detail: string }).detail).toMatch(/SVG/);
  });

  it('refuses SVG behind a forged PNG signature', () => {
    expect(problem(inspectImage(Buffer.concat([PNG_SIGNATURE, SVG])))).toBe('malformed');
  });

  it('refuses a pixel-flood header (65535×65535) without decoding it', () => {
    expect(problem(inspectImage(makePng(65535, 65535, { headerOnly: true })))).toBe('too_large');
    expect(problem(inspectImage(makePng(65535, 65535, { headerOnly: true }), 'prefix'))).toBe('too_large');
  });

  it('accepts 4096 and refuses 4097 in either dimension', () => {
    expect(inspectImage(makePng(4096, 1, { headerOnly: true }), 'prefix').ok).toBe(true);
    expect(problem(inspectImage(makePng(4097, 1, { headerOnly: true }), 'prefix'))).toBe('too_large');
    expect(problem(inspectImage(makePng(1, 4097, { headerOnly: true }), 'prefix'))).toBe('too_large');
  });

  it('refuses a PNG chunk whose length points past the end, and a bad CRC', () => {
    const png = makePng(5, 3);
    const huge = Buffer.from(png);
    huge.writeUInt32BE(0x7ffffff0, 33); // IDAT length
    expect(problem(inspectImage(huge))).toBe('truncated');
    const badCrc = Buffer.from(png);
    badCrc[badCrc.length - 20] = badCrc[badCrc.length - 20]! ^ 0xff; // inside IDAT
    expect(problem(inspectImage(badCrc))).toBe('malformed');
  });

  it('refuses a PNG with a second IHDR or no IDAT', () => {
    const png = makePng(5, 3);
    const ihdr = png.subarray(8, 33);
    const twice = Buffer.concat([png.subarray(0, 33), ihdr, png.subarray(33)]);
    expect(problem(inspectImage(twice))).toBe('malformed');
    const noData = Buffer.concat([png.subarray(0, 33), pngChunk('IEND', Buffer.alloc(0))]);
    expect(problem(inspectImage(noData))).toBe('malformed');
  });

  it('walks JPEG segments by their lengths, so a frame header hidden in a comment is not read', () => {
    const jpeg = fixtures.baselineJpeg();
    // A COM segment carrying bytes that look like a 4000×4000 frame header.
    const fake = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0x0f, 0xa0, 0x0f, 0xa0, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    const comment = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, fake.length + 2]), fake]);
    const withComment = Buffer.concat([jpeg.subarray(0, 2), comment, jpeg.subarray(2)]);
    expect(inspectImage(withComment)).toEqual({ ok: true, image: { type: 'image/jpeg', ...FIXTURE_SIZE } });
    expect(inspectImage(withComment, 'prefix')).toEqual({ ok: true, image: { type: 'image/jpeg', ...FIXTURE_SIZE } });
  });

  it('refuses a JPEG segment whose length runs past the end, and a zero-length segment', () => {
    const jpeg = fixtures.baselineJpeg();
    const long = Buffer.from(jpeg);
    long.writeUInt16BE(0xffff, 4); // APP0 length
    expect(problem(inspectImage(long))).toBe('truncated');
    const zero = Buffer.from(jpeg);
    zero.writeUInt16BE(0, 4);
    expect(problem(inspectImage(zero))).toBe('malformed');
  });

  it('refuses lossless and arithmetic-coded JPEG frames', () => {
    const jpeg = Buffer.from(fixtures.baselineJpeg());
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    expect(sof).toBeGreaterThan(0);
    jpeg[sof + 1] = 0xc3;
    expect(problem(inspectImage(jpeg))).toBe('unsupported');
  });

  it('refuses a WebP whose RIFF size lies, and an animated WebP', () => {
    const webp = Buffer.from(fixtures.lossyWebp());
    const longer = Buffer.from(webp);
    longer.writeUInt32LE(webp.readUInt32LE(4) + 100, 4);
    expect(problem(inspectImage(longer))).toBe('truncated');
    const animated = Buffer.from(fixtures.extendedWebp());
    animated[20] = animated[20]! | 0x02;
    expect(problem(inspectImage(animated))).toBe('unsupported');
  });

  it('refuses a VP8X canvas that differs from its frame', () => {
    const webp = Buffer.from(fixtures.extendedWebp());
    webp[24] = 9; // canvas width - 1
    expect(problem(inspectImage(webp))).toBe('malformed');
  });

  it('survives random corruption of real files without throwing', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    for (const make of Object.values(real)) {
      const original = make();
      for (let round = 0; round < 200; round++) {
        const bytes = Buffer.from(original);
        for (let k = 0; k < 3; k++) bytes[random() % bytes.length] = random() & 0xff;
        expect(() => inspectImage(bytes)).not.toThrow();
        expect(() => inspectImage(bytes, 'prefix')).not.toThrow();
      }
    }
  });
});
