import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../src/lib/errors.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { rawRequest, type RawResponse } from '../helpers/raw-http.js';

/**
 * Answers given before any route runs (router, node's HTTP parser, shutdown) must look like every
 * other answer: `{error:{code,message}}` from the catalogue, with the status the catalogue gives
 * that code, and the security headers. These need a real socket: `inject` cannot send bytes that
 * are not valid HTTP, and never goes through node's parser.
 */
function expectCatalogueError(res: RawResponse | null, code?: ErrorCode): void {
  expect(res, 'the server hung up without answering').not.toBeNull();
  const response = res!;
  if (code !== 'unavailable') expect(response.status, response.raw).toBeLessThan(500);
  expect(response.headers['content-type'], response.raw).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as { error: { code: ErrorCode; message: string } };
  expect(Object.keys(body), response.raw).toEqual(['error']);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(10);
  expect(ERROR_STATUS[body.error.code], `${body.error.code} is not in the catalogue`).toBe(response.status);
  if (code) expect(body.error.code).toBe(code);
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.body).not.toMatch(/FST_|statusCode|HPE_INVALID_|stack/);
}

const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: gatehouse.test\r\n${headers}Connection: close\r\n\r\n`;

describe('errors raised before the handler, over real HTTP', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  it('answers a path that is not valid percent-encoding with 400 invalid_request', async () => {
    const res = await rawRequest(port, get('/v1/users/%E0%A4%A'));
    expectCatalogueError(res, 'invalid_request');
    expect(JSON.parse(res!.body).error.message).toContain('percent-encoding');
  });

  it('answers a path parameter over 100 characters with 414 uri_too_long', async () => {
    const res = await rawRequest(port, get(`/v1/users/${'u'.repeat(101)}`));
    expect(res?.status).toBe(414);
    expectCatalogueError(res, 'uri_too_long');
    // 100 characters still reach the route, which refuses the credential first.
    expect((await rawRequest(port, get(`/v1/users/${'u'.repeat(100)}`)))?.status).toBe(401);
  });

  it('answers an over-long query string and over-long headers with 431 headers_too_large', async () => {
    const query = await rawRequest(port, get(`/v1/users?email=${'q'.repeat(20_000)}`));
    expect(query?.status).toBe(431);
    expectCatalogueError(query, 'headers_too_large');
    const header = await rawRequest(port, get('/v1/health', `X-Padding: ${'h'.repeat(20_000)}\r\n`));
    expectCatalogueError(header, 'headers_too_large');
  });

  it('answers bytes that are not HTTP with 400 invalid_request', async () => {
    expectCatalogueError(await rawRequest(port, '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'), 'invalid_request');
  });

  it('answers an HTTP/1.1 request without Host with 400 invalid_request', async () => {
    const res = await rawRequest(port, 'GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectCatalogueError(res, 'invalid_request');
    expect(JSON.parse(res!.body).error.message).toContain('Host');
  });

  it('answers CONNECT instead of hanging up', async () => {
    expectCatalogueError(await rawRequest(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 'invalid_request');
  });

  it('serves a request whose Expect it does not know, instead of an empty 417', async () => {
    const res = await rawRequest(port, get('/v1/health', 'Expect: 200-ok\r\n'));
    expect(res?.status).toBe(200);
  });

  // A fuzz-ish sweep: each answer is in the shape, from the catalogue, and never a 5xx.
  const malformed: [string, string | Buffer][] = [
    ['truncated escape', get('/v1/users/%')],
    ['non-hex escape', get('/v1/users/%zz')],
    ['overlong UTF-8', get('/v1/users/%C0%AF')],
    ['lone continuation byte', get('/v1/me/sessions/%80')],
    ['surrogate half', get('/v1/organizations/%ED%A0%80/members')],
    ['bad escape in a platform path', get('/v1/platform/projects/%E0%A4%A/usage')],
    ['bad escape on an unknown route', get('/v1/nothing/%E0%A4%A')],
    ['bad escape in the query', get('/v1/users?email=%E0%A4%A&cursor=%')],
    ['NUL escape', get('/v1/users/%00')],
    ['encoded traversal', get('/v1/users/..%2F..%2Fetc%2Fpasswd')],
    ['long parameter on a nested route', get(`/v1/organizations/${'o'.repeat(500)}/members/${'m'.repeat(500)}`)],
    ['long parameter on the well-known route', get(`/v1/environments/${'e'.repeat(200)}/.well-known/jwks.json`)],
    ['long query', get(`/v1/platform/projects?${'a=1&'.repeat(5_000)}`)],
    ['many headers', get('/v1/health', 'X-A: b\r\n'.repeat(3_000))],
    ['long header value', get('/v1/environment', `Authorization: Bearer pk_test_${'k'.repeat(17_000)}\r\n`)],
    ['header without colon', get('/v1/health', 'NoColonHere\r\n')],
    ['space in a header name', get('/v1/health', 'Bad Header: x\r\n')],
    ['control character in a header value', get('/v1/health', 'X-Ctl: a\x01b\r\n')],
    ['CR inside a header value', get('/v1/health', 'X-Ctl: a\rb\r\n')],
    ['invalid method', 'G@T /v1/health HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['unknown HTTP version', 'GET /v1/health HTTP/3.7\r\nHost: x\r\n\r\n'],
    ['space in the path', 'GET /v1/us ers HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['raw non-ASCII in the path', Buffer.concat([Buffer.from('GET /v1/users/'), Buffer.from([0xff, 0xfe]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])],
    ['two Content-Length values', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['Content-Length and chunked', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['non-numeric Content-Length', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    ['broken chunk size', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
    ['unknown transfer coding', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n'],
    ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    ['TRACE', get('/v1/health').replace('GET', 'TRACE')],
    ['unrouted method', get('/v1/users').replace('GET', 'PROPFIND')],
    ['garbage content type', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Type: ;;;\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'],
    ['truncated JSON body with a credential', 'POST /v1/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"a":'],
    ['Host with a bad character', get('/v1/health').replace('Host: gatehouse.test', 'Host: gate house')],
    ['duplicate Host', get('/v1/health', 'Host: other.test\r\n')],
  ];

  it.each(malformed)('answers a request with %s in the error shape, never a 5xx', async (_what, request) => {
    const res = await rawRequest(port, request);
    expect(res, 'the server hung up without answering').not.toBeNull();
    if (res!.status < 400) return; // some oddities are legal HTTP, and served
    expectCatalogueError(res);
  });

  it('has served a normal request after all of that', async () => {
    expect((await rawRequest(port, get('/v1/health')))?.status).toBe(200);
  });
});

describe('errors of the connection itself', () => {
  it('answers a client too slow to send its headers with 408 request_timeout', async () => {
    const t = await startTestApp();
    // Node checks header deadlines on a timer started at listen; both shortened for the test.
    const server = t.app.server as typeof t.app.server & { connectionsCheckingInterval: number };
    server.headersTimeout = 200;
    server.requestTimeout = 200;
    server.connectionsCheckingInterval = 50;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (server.address() as { port: number }).port;
    const res = await rawRequest(port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(res?.status).toBe(408);
    expectCatalogueError(res, 'request_timeout');
    await t.close();
  });

  it('answers requests that arrive while the server closes with 503 unavailable, in the shape', async () => {
    let entered!: () => void;
    let release!: () => void;
    const closeBegan = new Promise<void>((resolve) => (entered = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = await startTestApp({
      routes: (app) => {
        // Hold the close open (as a slow drain would) while a request arrives.
        app.addHook('preClose', async () => {
          entered();
          await held;
        });
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;
    const closed = t.close();
    await closeBegan;
    const res = await rawRequest(port, get('/v1/health'));
    expect(res?.status, res?.raw).toBe(503);
    expectCatalogueError(res, 'unavailable');
    expect(res!.headers.connection).toBe('close');
    release();
    await closed;
  });
});
