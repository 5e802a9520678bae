import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * Sends the head and then `bodyBytes` of body over one connection, as a client that writes its whole
 * request before it reads (curl, most HTTP clients), then reads what came back until the server
 * closes. A reset that arrives while the answer is still unread discards it: that is the defect.
 */
function sendOversized(port: number, publishableKey: string, bodyBytes: number): Promise<{ answer: string; reset: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let reset = false;
    const timer = setTimeout(() => socket.destroy(), 20_000);
    socket.pause(); // nothing is read until the whole request is written
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => {
      reset = true;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer: Buffer.concat(received).toString('latin1'), reset });
    });
    socket.write(
      `POST /v1/auth/signin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${publishableKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < bodyBytes && !socket.destroyed) {
        const size = Math.min(chunk.length, bodyBytes - sent);
        sent += size;
        if (!socket.write(size === chunk.length ? chunk : chunk.subarray(0, size))) return void socket.once('drain', pump);
      }
      if (socket.destroyed) return;
      socket.end();
      socket.resume();
    };
    pump();
  });
}

describe('a body over the limit, over a real connection', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ rateLimit: false });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(() => t.close());

  it('a 10 MB JSON body to POST /v1/auth/signin is answered 413 payload_too_large every time, never a reset before the answer', async () => {
    for (let i = 0; i < 20; i++) {
      const { answer } = await sendOversized(port, t.project.development.publishableKey, 10 * 1024 * 1024);
      expect(answer, `try ${i + 1}`).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('"code":"payload_too_large"');

    }
  });
  it('a client that stops sending the rest of an oversized body cannot hold the connection: it is closed after the answer', async () => {
    const outcome = await new Promise<{ answer: string; closed: boolean }>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const received: Buffer[] = [];
      const guard = setTimeout(() => {
        socket.destroy();
        resolve({ answer: Buffer.concat(received).toString('latin1'), closed: false });
      }, 15_000);
      socket.on('data', (chunk) => received.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(guard);
        resolve({ answer: Buffer.concat(received).toString('latin1'), closed: true });
      });
      socket.write(
        `POST /v1/auth/signin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.project.development.publishableKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(256 * 1024, 'a')); // then nothing more, and the socket stays open
    });
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.closed).toBe(true);
  });

  it('after a fully sent oversized body the connection serves the next request', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    const body = Buffer.alloc(2 * 1024 * 1024, 'a');
    socket.write(
      `POST /v1/auth/signin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t.project.development.publishableKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    const answers = Buffer.concat(received).toString('latin1');
    expect(answers).toMatch(/^HTTP\/1\.1 413 /);
    expect(answers).toMatch(/\r\n\r\n[^]*HTTP\/1\.1 200 /);
  });
});
