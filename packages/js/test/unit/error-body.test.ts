import { describe, expect, it } from 'vitest';
import { parseRetryAfter, readErrorBody } from '@gatehouse/contract/error-body';
import { createGatehouseClient, GatehouseApiError } from '../../../backend/src/index.js';
import { errorFromResponse } from '../../src/errors.js';

/**
 * One parser of the error body for every client: the browser client and the admin client read the
 * same answers the same way, whatever form `Retry-After` takes.
 */
const NOW = Date.parse('2026-11-28T12:00:00Z');

describe('parseRetryAfter: every legal form of Retry-After', () => {
  it.each([
    ['3', 3],
    [' 120 ', 120],
    ['1.5', 1.5],
    ['0', 0],
    ['Sat, 28 Nov 2026 12:00:30 GMT', 30],
    ['Sat, 28 Nov 2026 11:59:00 GMT', 0],
  ])('%j is %d seconds', (header, seconds) => {
    expect(parseRetryAfter(header, NOW)).toBe(seconds);
  });

  it.each([null, undefined, '', 'soon', '-1', '1e3'])('%j is unreadable', (header) => {
    expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });
});

describe('readErrorBody', () => {
  it("takes Gatehouse's error shape as it is", () => {
    const body = JSON.stringify({ error: { code: 'rate_limited', message: 'Slow down.', details: { scope: 'ip' } } });
    expect(readErrorBody(429, '2.5', body)).toEqual({
      status: 429,
      code: 'rate_limited',
      message: 'Slow down.',
      details: { scope: 'ip' },
      retryAfter: 2.5,
      fromGatehouse: true,
    });
  });

  it("gives a proxy's page the code of its status, never unauthenticated", () => {
    expect(readErrorBody(502, null, '<html>Bad gateway</html>')).toMatchObject({ code: 'unavailable', fromGatehouse: false });
    expect(readErrorBody(401, null, 'Unauthorized')).toMatchObject({ code: 'internal', fromGatehouse: false });
    expect(readErrorBody(404, null, '')).toMatchObject({ code: 'not_found', message: expect.stringContaining('empty body') });
  });

  it('the browser client and the admin client read a decimal and a dated Retry-After alike', async () => {
    const { createServer } = await import('node:http');
    let header = '';
    const server = createServer((_request, response) => {
      response.writeHead(429, { 'retry-after': header, 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'rate_limited', message: 'Slow down.' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const admin = createGatehouseClient({ secretKey: 'sk_test_x', baseUrl, retry: { maxRetries: 0 } });
    try {
      for (header of ['1.5', new Date(Date.now() + 30_000).toUTCString()]) {
        const browser = await errorFromResponse(await fetch(`${baseUrl}/v1/me`));
        const refused = await admin.users.get('user_x').then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(GatehouseApiError);
        expect(browser).toMatchObject({ status: 429, code: 'rate_limited' });
        expect(browser.retryAfter).toBeGreaterThan(0);
        // The dated form may cross a second boundary between the two requests.
        expect(Math.abs((refused as GatehouseApiError).retryAfter! - browser.retryAfter!)).toBeLessThanOrEqual(1);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
