import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { SignatureThread } from '../../src/sessions/signature-thread.js';
import { AccessTokens } from '../../src/sessions/tokens.js';
import type { SigningKey, SigningKeys } from '../../src/sessions/signing-keys.js';
import type { Environment } from '../../src/tenancy/settings.js';

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('RS256 signatures on a thread of their own', () => {
  const threads: SignatureThread[] = [];
  const thread = () => {
    const made = new SignatureThread();
    threads.push(made);
    return made;
  };
  afterEach(async () => {
    await Promise.all(threads.splice(0).map((t) => t.close()));
  });

  it('makes the signature crypto.sign makes, for each key, many at once', async () => {
    const signer = thread();
    const keys = [rsa(), rsa()];
    const inputs = Array.from({ length: 40 }, (_, i) => `header.payload-${i}`);
    const signatures = await Promise.all(inputs.map((input, i) => signer.signRs256(input, keys[i % 2]!.privateKey)));
    signatures.forEach((signature, i) => {
      // RSASSA-PKCS1-v1_5 is deterministic: the same bytes as signing here.
      expect(signature).toBe(sign('sha256', Buffer.from(inputs[i]!), keys[i % 2]!.privateKey).toString('base64url'));
      expect(verify('sha256', Buffer.from(inputs[i]!), keys[i % 2]!.publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
    });
  });

  it('starts a new thread after one crashed, and sends it the keys again', async () => {
    const signer = thread();
    const key = rsa();
    await signer.signRs256('before', key.privateKey);
    await (signer as unknown as { worker: Worker }).worker.terminate(); // as if it had crashed
    const after = await signer.signRs256('after', key.privateKey);
    expect(verify('sha256', Buffer.from('after'), key.publicKey, Buffer.from(after, 'base64url'))).toBe(true);
  });

  it('refuses a signature it cannot send, without losing the others of its batch for good', async () => {
    const signer = thread();
    const key = rsa();
    // Not a KeyObject: the message cannot be cloned to the thread, and the whole batch is refused.
    const refused = signer.signRs256('bad', (() => 1) as unknown as KeyObject);
    await expect(refused).rejects.toThrow();
    const later = await signer.signRs256('later', key.privateKey);
    expect(verify('sha256', Buffer.from('later'), key.publicKey, Buffer.from(later, 'base64url'))).toBe(true);
  });

  it('once closed, refuses every signature (callers sign inline) and starts no thread', async () => {
    const signer = thread();
    const key = rsa();
    await signer.signRs256('open', key.privateKey);
    await signer.close();
    await expect(signer.signRs256('closed', key.privateKey)).rejects.toThrow(/closed/);
    expect((signer as unknown as { worker: Worker | undefined }).worker).toBeUndefined();
  });

  it('refuses what is pending when the thread ends, and signs nothing wrong', async () => {
    const signer = thread();
    const key = rsa();
    // Tens of milliseconds of signatures, sent to the thread, which ends while it works on them.
    const pending = Array.from({ length: 200 }, (_, i) => signer.signRs256(`in flight ${i}`, key.privateKey));
    await new Promise((resolve) => setImmediate(resolve));
    await signer.close();
    const outcomes = await Promise.allSettled(pending);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) expect(String((o as PromiseRejectedResult).reason)).toMatch(/signature thread (exited|is closed)/);
    outcomes.forEach((o, i) => {
      if (o.status === 'fulfilled') {
        expect(verify('sha256', Buffer.from(`in flight ${i}`), key.publicKey, Buffer.from(o.value, 'base64url'))).toBe(true);
      }
    });
  });

  it('a token is still signed, inline, when the thread fails', async () => {
    const key = rsa();
    const signingKey: SigningKey = { kid: 'key_test', alg: 'RS256', privateKey: key.privateKey, encodedHeader: 'eyJhbGciOiJSUzI1NiJ9' };
    const keys = { signingKey: async () => signingKey } as unknown as SigningKeys;
    const failing = {
      signRs256: async () => Promise.reject(new Error('The signature thread exited (code 1).')),
    } as unknown as SignatureThread;
    const tokens = new AccessTokens(keys, 'http://gatehouse.test', Date.now, 0, failing);
    const environment = { id: 'env_00000000000000000000000000', settings: { accessTokenTtlSeconds: 60 } } as unknown as Environment;
    const { token } = await tokens.issue(environment, { userId: 'user_1', sessionId: 'sess_1', origin: undefined });
    const [header, payload, signature] = token.split('.');
    expect(verify('sha256', Buffer.from(`${header}.${payload}`), key.publicKey, Buffer.from(signature!, 'base64url'))).toBe(true);
  });
});
