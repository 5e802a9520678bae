import jsQR from 'jsqr';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { encodeQr, QrCode } from '../src/ui/qr.js';

/** The grid as an image a camera would see: 4 pixels a module, 4 modules of quiet zone. */
function decode(grid: boolean[][]): string | undefined {
  const scale = 4;
  const quiet = 4;
  const side = (grid.length + quiet * 2) * scale;
  const pixels = new Uint8ClampedArray(side * side * 4).fill(255);
  grid.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (!dark) return;
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const at = (((y + quiet) * scale + dy) * side + (x + quiet) * scale + dx) * 4;
          pixels.fill(0, at, at + 3);
        }
      }
    }),
  );
  return jsQR(pixels, side, side, { inversionAttempts: 'dontInvert' })?.data;
}

const text = (length: number) => Array.from({ length }, (_, i) => 'abcdefghijklmnopqrstuvwxyz0123456789:/?&=%'[(i * 7) % 42]).join('');

describe('the QR encoder (byte mode, level M)', () => {
  it('picks the smallest version that holds the bytes (capacities of ISO/IEC 18004 table 7)', () => {
    // Byte mode, level M: version 1 holds 14 bytes, 2: 26, 7: 122, 10: 213, 40: 2331.
    expect(encodeQr(text(14))).toHaveLength(21);
    expect(encodeQr(text(15))).toHaveLength(25);
    expect(encodeQr(text(26))).toHaveLength(25);
    expect(encodeQr(text(122))).toHaveLength(45);
    expect(encodeQr(text(123))).toHaveLength(49);
    expect(encodeQr(text(213))).toHaveLength(57);
    expect(encodeQr(text(2331))).toHaveLength(177);
    expect(() => encodeQr(text(2332))).toThrow(RangeError);
  });

  it('is read back by an independent decoder at every version from 1 to 16, multi-block ones included', () => {
    // Lengths at each version's capacity and one past the previous one.
    const capacities = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450];
    for (const [i, capacity] of capacities.entries()) {
      for (const length of [capacity, (capacities[i - 1] ?? 0) + 1]) {
        const value = text(length);
        const grid = encodeQr(value);
        expect(grid.length, `${length} bytes`).toBe(21 + 4 * i);
        expect(decode(grid), `${length} bytes`).toBe(value);
      }
    }
  });

  it('encodes UTF-8 and an otpauth URL as an authenticator app reads it', () => {
    const url = 'otpauth://totp/Acme%20Corp:ad%C3%A5%2Blove%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Acme%20Corp';
    expect(decode(encodeQr(url))).toBe(url);
    expect(decode(encodeQr('Ådå Lövelace ✓'))).toBe('Ådå Lövelace ✓');
  });

  it('carries working error correction: a damaged symbol still reads', () => {
    const value = text(100);
    const grid = encodeQr(value);
    // Flip a 4×4 patch in the data area (the bottom-right corner, away from finders and timing).
    const size = grid.length;
    for (let y = size - 6; y < size - 2; y++) for (let x = size - 6; x < size - 2; x++) grid[y]![x] = !grid[y]![x];
    expect(decode(grid)).toBe(value);
  });

  it('renders an SVG with a quiet zone, dark on white', () => {
    const svg = renderToStaticMarkup(createElement(QrCode, { value: 'otpauth://totp/x', size: 120 }));
    expect(svg).toMatch(/^<svg[^>]*role="img"[^>]*aria-label="QR code"[^>]*width="120"[^>]*viewBox="0 0 33 33"/); // 16 bytes: version 2, 25 modules and the quiet zone
    expect(svg).toContain('fill="#fff"');
    expect(svg).toMatch(/<path d="M4 4h1v1h-1z/);
  });
});
