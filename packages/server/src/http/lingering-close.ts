import type { FastifyInstance } from 'fastify';

/** After the answer, how long the rest of the body may pause before the connection is closed. */
export const LINGER_IDLE_MS = 5_000;
/** However much the client still sends, its connection is closed this long after the answer. */
export const LINGER_MAX_MS = 30_000;

/**
 * An answer given before the request body was read (413 payload_too_large above all) used to close
 * the connection (`Connection: close`, Fastify's choice) at once, while the client was still
 * sending: the kernel answers the unread bytes with a reset, and a reset that reaches the client
 * before it reads the answer discards it (1 try in 5 for 10 MB to POST /v1/auth/signin). So, as
 * nginx's lingering close does, the rest of the body is read and dropped after the answer, and the
 * connection is kept for the next request once it is all in. Bounded: a body that pauses for
 * LINGER_IDLE_MS, or still arrives LINGER_MAX_MS after the answer, has its connection closed.
 */
export function installLingeringClose(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    const connection = reply.getHeader('connection');
    const socket = raw.socket;
    const hasBody = raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0;
    // Not while the server closes (503): that answer must close its connection.
    if (reply.statusCode !== 503 && hasBody && !raw.complete && socket && typeof connection === 'string' && connection.toLowerCase() === 'close') {
      reply.removeHeader('connection');
      const close = () => {
        if (!raw.complete) socket.destroy();
      };
      let idle = setTimeout(close, LINGER_IDLE_MS);
      const cap = setTimeout(close, LINGER_MAX_MS);
      const stop = () => {
        clearTimeout(idle);
        clearTimeout(cap);
      };
      // Read and dropped here (node would read it too, but without telling us it still arrives).
      raw.on('data', () => {
        clearTimeout(idle);
        idle = setTimeout(close, LINGER_IDLE_MS);
      });
      raw.once('end', stop);
      socket.once('close', stop);
      raw.resume();
    }
    done(null, payload);
  });
}
