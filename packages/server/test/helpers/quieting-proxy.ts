import { connect, createServer, type Server, type Socket } from 'node:net';

interface Link {
  client: Socket;
  upstream: Socket;
  subscriber: boolean;
  quiet: boolean;
}

/**
 * A TCP proxy in front of Redis that can make its subscriber connections go quiet without closing
 * them, as a half-open connection or a stuck middlebox does: bytes from Redis stop arriving, and
 * neither side sees an error. Connections made afterwards pass through normally.
 */
export class QuietingProxy {
  private constructor(
    private readonly server: Server,
    private readonly links: Set<Link>,
    /** The Redis URL, pointed at the proxy. */
    readonly url: string,
  ) {}

  static async start(redisUrl: string): Promise<QuietingProxy> {
    const target = new URL(redisUrl);
    const links = new Set<Link>();
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      const link: Link = { client, upstream, subscriber: false, quiet: false };
      links.add(link);
      client.on('data', (bytes) => {
        if (/subscribe/i.test(bytes.toString('latin1'))) link.subscriber = true;
        upstream.write(bytes);
      });
      upstream.on('data', (bytes) => {
        if (!link.quiet) client.write(bytes);
      });
      const end = () => {
        links.delete(link);
        client.destroy();
        upstream.destroy();
      };
      for (const socket of [client, upstream]) {
        socket.on('error', end);
        socket.on('close', end);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxied = new URL(redisUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String((server.address() as { port: number }).port);
    return new QuietingProxy(server, links, proxied.toString());
  }

  /** Stops delivering Redis's bytes on every connection that has subscribed so far. */
  quietSubscribers(): number {
    let count = 0;
    for (const link of this.links) {
      if (link.subscriber) {
        link.quiet = true;
        count++;
      }
    }
    return count;
  }

  async close(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
