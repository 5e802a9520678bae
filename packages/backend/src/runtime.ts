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

/** base64url (padding tolerated, as Buffer does) to bytes; throws on characters outside the alphabet. */
export function fromBase64url(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'base64url');
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

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
  return NodeBuffer ? NodeBuffer.from(text, 'utf8') : encoder.encode(text);
}
