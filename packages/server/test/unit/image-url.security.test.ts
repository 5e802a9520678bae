import { describe, expect, it } from 'vitest';
import { assertAcceptableImageUrl } from '../../src/assets/image-url.js';
import { ApiError } from '../../src/lib/errors.js';

const SHA = 'a'.repeat(64);
const LOCAL = { ownAssetPrefix: 'http://localhost:4000/v1/assets/' };

function refusal(url: string, options = LOCAL): ApiError | null {
  try {
    assertAcceptableImageUrl(url, options);
    return null;
  } catch (error) {
    return error as ApiError;
  }
}

describe('imageUrl rule', () => {
  it('accepts any https URL', () => {
    expect(refusal('https://cdn.example.com/me.png')).toBeNull();
    expect(assertAcceptableImageUrl('https://CDN.example.com/a%20b.png', LOCAL).href).toBe('https://cdn.example.com/a%20b.png');
    expect(refusal(`https://gatehouse.example.com/v1/assets/env_1/${SHA}`)).toBeNull();
  });

  it("accepts this instance's own asset URLs over http on a loopback host", () => {
    expect(refusal(`http://localhost:4000/v1/assets/env_abc/${SHA}`)).toBeNull();
    for (const host of ['127.0.0.1', '[::1]']) {
      expect(refusal(`http://${host}:4000/v1/assets/env_abc/${SHA}`, { ownAssetPrefix: `http://${host}:4000/v1/assets/` })).toBeNull();
    }
    // An S3 store in local development has its own public prefix.
    expect(refusal(`http://127.0.0.1:9000/bucket/env_abc/${SHA}`, { ownAssetPrefix: 'http://127.0.0.1:9000/bucket/' })).toBeNull();
  });

  it.each([
    ['plain http elsewhere', 'http://cdn.example.com/me.png'],
    ['a look-alike of localhost', `http://localhost.evil.test:4000/v1/assets/env_abc/${SHA}`],
    ['a look-alike of 127.0.0.1', `http://127.0.0.1.evil.test:4000/v1/assets/env_abc/${SHA}`],
    ['userinfo that reads like the host', `http://localhost:4000@evil.test/v1/assets/env_abc/${SHA}`],
    ['another port on the own host', `http://localhost:4001/v1/assets/env_abc/${SHA}`],
    ['another path on the own host', 'http://localhost:4000/v1/me'],
    ['a dot-segment walking out of the asset path', `http://localhost:4000/v1/assets/../me/${SHA}`],
    ['an encoded slash in the key', `http://localhost:4000/v1/assets/env_abc%2F${SHA}`],
    ['a query on an own URL', `http://localhost:4000/v1/assets/env_abc/${SHA}?x=1`],
    ['a short key', 'http://localhost:4000/v1/assets/env_abc/abc'],
    ['javascript:', 'javascript:alert(document.cookie)'],
    ['data:', 'data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+'],
    ['a relative URL', '/v1/assets/env_abc/x'],
    ['credentials in an https URL', 'https://user:pass@cdn.example.com/me.png'],
    ['ftp', 'ftp://example.com/me.png'],
    ['a space the parser would encode', 'https://example.com/a b.png'],
    ['a newline the parser would drop', 'https://example.com/a\n.png'],
    ['leading whitespace the parser would trim', ' https://example.com/a.png'],
    ['a very long URL', `https://example.com/${'a'.repeat(3000)}`],
  ])('refuses %s', (_what, url) => {
    const error = refusal(url);
    expect(error).toBeInstanceOf(ApiError);
    expect(error!.code).toBe('invalid_request');
    expect(error!.details).toEqual({ fields: ['imageUrl'] });
    expect(error!.message).toMatch(/https/);
  });

  it('refuses own asset URLs over http when the instance is not on a loopback host', () => {
    const prefix = { ownAssetPrefix: 'http://gatehouse.internal/v1/assets/' };
    expect(refusal(`http://gatehouse.internal/v1/assets/env_abc/${SHA}`, prefix)?.code).toBe('invalid_request');
  });
});
