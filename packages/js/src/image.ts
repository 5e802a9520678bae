import { GatehouseError } from './errors.js';

export interface ImageFacts {
  contentType: 'image/png' | 'image/jpeg' | 'image/webp';
  contentLength: number;
  sha256: string;
  width: number;
  height: number;
}

function unsupported(message: string): GatehouseError {
  return new GatehouseError({ status: 0, code: 'unsupported_image_type', message });
}

/** Width and height from the header, as the server reads them (EXIF orientation is not applied). */
export function imageDimensions(b: Uint8Array): Omit<ImageFacts, 'contentLength' | 'sha256'> {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ascii = (at: number, text: string) => [...text].every((c, i) => b[at + i] === c.charCodeAt(0));
  if (b.length >= 24 && b[0] === 0x89 && ascii(1, 'PNG')) {
    return { contentType: 'image/png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (b.length >= 30 && ascii(0, 'RIFF') && ascii(8, 'WEBP')) {
    if (ascii(12, 'VP8X')) {
      const u24 = (at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
      return { contentType: 'image/webp', width: u24(24) + 1, height: u24(27) + 1 };
    }
    if (ascii(12, 'VP8L')) {
      const bits = view.getUint32(21, true);
      return { contentType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (ascii(12, 'VP8 ')) {
      return { contentType: 'image/webp', width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
    }
  }
  if (b[0] === 0xff && b[1] === 0xd8) {
    // Walk the segments to the first start-of-frame marker (SOF0–SOF15 except DHT, JPG, DAC).
    let at = 2;
    while (at + 9 < b.length) {
      if (b[at] !== 0xff) break;
      const marker = b[at + 1]!;
      if (marker === 0xff) {
        at++;
        continue;
      }
      const length = view.getUint16(at + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { contentType: 'image/jpeg', height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
      }
      at += 2 + length;
    }
  }
  throw unsupported('The file is not a PNG, JPEG or WebP image Gatehouse can read. Upload one of those formats.');
}

/** The upload ticket's facts of a file, computed here: type from its bytes, SHA-256, pixel size. */
export async function imageFacts(file: Blob | ArrayBuffer | Uint8Array): Promise<ImageFacts> {
  const bytes = file instanceof Uint8Array ? file : new Uint8Array(file instanceof ArrayBuffer ? file : await (file as Blob).arrayBuffer());
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  const sha256 = Array.from(digest, (x) => x.toString(16).padStart(2, '0')).join('');
  return { ...imageDimensions(bytes), contentLength: bytes.length, sha256 };
}
