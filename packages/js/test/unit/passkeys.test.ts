import { describe, expect, it } from 'vitest';
import { createGatehouse, PasskeyError } from '../../src/index.js';
import { creationOptions, fromBase64url, requestOptions, toBase64url } from '../../src/passkeys.js';

describe('passkeys in @gatehouse/js', () => {
  it('base64url round-trips every byte, without padding', () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const text = toBase64url(bytes);
    expect(text).not.toMatch(/[+/=]/);
    expect(Array.from(fromBase64url(text))).toEqual(Array.from(bytes));
    expect(toBase64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
  });

  it("turns the server's JSON options into the binary form navigator.credentials takes", () => {
    const created = creationOptions({
      challenge: 'AAEC',
      rp: { id: 'localhost', name: 'Acme' },
      user: { id: '_w', name: 'a@example.test', displayName: 'A' },
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }],
      excludeCredentials: [{ id: 'AQ', type: 'public-key', transports: ['internal'] }],
    });
    expect(Array.from(new Uint8Array(created.challenge as ArrayBuffer))).toEqual([0, 1, 2]);
    expect(Array.from(new Uint8Array(created.user.id as ArrayBuffer))).toEqual([255]);
    expect(Array.from(new Uint8Array(created.excludeCredentials![0]!.id as ArrayBuffer))).toEqual([1]);
    const requested = requestOptions({ challenge: 'AAEC', rpId: 'localhost', allowCredentials: [] });
    expect(requested.allowCredentials).toEqual([]);
    expect(requested.rpId).toBe('localhost');
  });

  it('without WebAuthn, signIn.passkey() says so with a PasskeyError, before calling the server', async () => {
    let calls = 0;
    const gh = createGatehouse({
      publishableKey: 'pk_test_x',
      baseUrl: 'http://gatehouse.test/',
      fetch: (async () => {
        calls += 1;
        return new Response('{}', { status: 500 });
      }) as typeof fetch,
    });
    const refused = await gh.signIn.passkey().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PasskeyError);
    expect((refused as PasskeyError).reason).toBe('unsupported');
    expect((refused as PasskeyError).message).toContain('secure context');
    expect(calls).toBe(0);
  });
});
