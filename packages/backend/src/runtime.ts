/**
 * What this runtime offers. Node's crypto is looked up at run time (`process.getBuiltinModule`), not
 * imported: a static `import 'node:crypto'` cannot even load on the Edge runtime (Next.js
 * middleware, Workers), where verification falls back to WebCrypto with the same rules.
 */
type NodeCrypto = typeof import('node:crypto');

function lookUpNodeCrypto(): NodeCrypto | undefined {
  try {
    const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    // A property read, not a call, on runtimes whose `process` is a partial stand-in.
    const get = typeof process?.getBuiltinModule === 'function' ? process.getBuiltinModule : undefined;
    const crypto = get?.call(process, 'node:crypto') as NodeCrypto | undefined;
    return typeof crypto?.verify === 'function' ? crypto : undefined;
  } catch {
    return undefined;
  }
}

/** Node's crypto, or undefined where it is absent (Edge runtimes, and Node before 20.16). */
export const nodeCrypto: NodeCrypto | undefined = lookUpNodeCrypto();

/** Which implementation verifies signatures here: for diagnostics and tests. */
export function cryptoRuntime(): 'node' | 'webcrypto' {
  return nodeCrypto ? 'node' : 'webcrypto';
}

const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Each ASCII code's 6-bit value, -1 outside the alphabet; `+` and `/` read as `-` and `_`, as atob's would. */
const SEXTETS = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) SEXTETS[ALPHABET.charCodeAt(i)] = i;
SEXTETS[43] = 62;
SEXTETS[47] = 63;

function sextet(text: string, i: number): number {
  const code = text.charCodeAt(i);
  const value = code < 128 ? SEXTETS[code]! : -1;
  if (value < 0) throw new TypeError(`Not base64url: ${JSON.stringify(text[i])} at ${i}.`);
  return value;
}

/**
 * Small byte arrays for the WebCrypto path, carved from a shared pool as Buffer.allocUnsafe does:
 * on Node every typed array over 64 bytes gets its own backing store (1–3 µs each, more than the
 * rest of a token's parsing). A region is never handed out twice, so no two tokens share bytes even
 * on a runtime whose crypto.subtle read its input late.
 */
const POOL_SIZE = 16 * 1024;
let pool = new Uint8Array(0);
let poolOffset = 0;

function allocate(length: number): Uint8Array {
  if (length > POOL_SIZE >> 2) return new Uint8Array(length);
  if (poolOffset + length > pool.length) {
    pool = new Uint8Array(POOL_SIZE);
    poolOffset = 0;
  }
  const view = pool.subarray(poolOffset, poolOffset + length);
  poolOffset += (length + 7) & ~7;
  return view;
}

/** base64url (padding tolerated, as Buffer does) to bytes; throws on characters outside the alphabet. */
export function fromBase64url(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'base64url');
  // One pass with a table, into the pool: atob's binary string would need a second pass and an array.
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61 /* = */) end--;
  if (end % 4 === 1) throw new TypeError('Not base64url: its length is impossible.');
  const bytes = allocate((end * 3) >> 2);
  let o = 0;
  let i = 0;
  for (; i + 4 <= end; i += 4) {
    const n = (sextet(text, i) << 18) | (sextet(text, i + 1) << 12) | (sextet(text, i + 2) << 6) | sextet(text, i + 3);
    bytes[o++] = n >> 16;
    bytes[o++] = (n >> 8) & 0xff;
    bytes[o++] = n & 0xff;
  }
  if (end - i >= 2) {
    const n = (sextet(text, i) << 18) | (sextet(text, i + 1) << 12) | (end - i === 3 ? sextet(text, i + 2) << 6 : 0);
    bytes[o++] = n >> 16;
    if (end - i === 3) bytes[o++] = (n >> 8) & 0xff;
  }
  return bytes;
}

/**
 * Whether `text` is the one canonical base64url spelling of its bytes (no padding, no stray
 * characters, zero unused bits), i.e. what encoding the decoded bytes gives back, without
 * re-encoding them.
 */
export function isCanonicalBase64url(text: string): boolean {
  if (text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return false;
  const unusedBits = text.length % 4 === 2 ? 0x0f : text.length % 4 === 3 ? 0x03 : 0;
  return unusedBits === 0 || (ALPHABET.indexOf(text[text.length - 1]!) & unusedBits) === 0;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A base64url segment's text (UTF-8). */
export function base64urlText(segment: string): string {
  if (NodeBuffer) return NodeBuffer.from(segment, 'base64url').toString('utf8');
  return decoder.decode(fromBase64url(segment));
}

export function utf8Bytes(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'utf8');
  // A token is ASCII, one byte per character: straight into the pool. Anything else, as it comes.
  const bytes = allocate(text.length);
  const { read, written } = encoder.encodeInto(text, bytes);
  return read === text.length && written === text.length ? bytes : encoder.encode(text);
}
