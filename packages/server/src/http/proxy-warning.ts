import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { InstanceStatus } from '@gatehouse/contract';
import { isNonPublicAddress } from '../lib/addresses.js';

/**
 * A proxy that TRUST_PROXY does not name makes every client the proxy's address: one client's
 * wrong passwords then lock every client out (the throttles key on the client IP). Requests that
 * carry X-Forwarded-For from a private or loopback peer that is not trusted are the sign of it;
 * the first one is logged once per node and kept for the console's settings page.
 */
export class ProxyWarning {
  private seen: { peer: string; firstSeenAt: number; message: string } | null = null;

  constructor(
    readonly trustProxy: boolean,
    private readonly now: () => number,
    private readonly warn: (message: string) => void,
  ) {}

  /** `ip` is the client Fastify settled on: the peer itself when the peer is not a trusted proxy. */
  observe(peer: string | undefined, ip: string, forwardedFor: string | string[] | undefined): void {
    if (this.seen || forwardedFor === undefined || !peer || ip !== peer || !isNonPublicAddress(peer)) return;
    const message = this.trustProxy
      ? `Requests carry X-Forwarded-For from ${peer}, a private or loopback address that TRUST_PROXY does not name: every client behind it counts as ${peer}, so one client's failed sign-ins throttle them all. Add the proxy to TRUST_PROXY.`
      : `Requests carry X-Forwarded-For from ${peer}, a private or loopback address, but TRUST_PROXY is unset: every client behind the proxy counts as ${peer}, so one client's failed sign-ins throttle them all. Set TRUST_PROXY to the proxy's address (see docs/configuration.md).`;
    this.seen = { peer, firstSeenAt: this.now(), message };
    this.warn(message);
  }

  status(): InstanceStatus {
    return { trustProxy: this.trustProxy, proxyWarning: this.seen };
  }
}

export const proxyWarningPlugin = fp<{ warning: ProxyWarning }>(
  async (app: FastifyInstance, { warning }) => {
    // A callback, not an async function: one header read per request, no promise.
    app.addHook('onRequest', (request, _reply, done) => {
      const forwarded = request.headers['x-forwarded-for'];
      if (forwarded !== undefined) warning.observe(request.socket.remoteAddress, request.ip, forwarded);
      done();
    });
    app.get(
      '/v1/platform/instance',
      {
        config: { credentials: ['platform'] },
        schema: { summary: "This node's deployment warnings, such as a proxy TRUST_PROXY does not name", tags: ['platform'], response: { 200: InstanceStatus } },
      },
      async () => warning.status(),
    );
  },
  { name: 'gatehouse-proxy-warning' },
);
