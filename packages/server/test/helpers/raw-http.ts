import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server wrote, for failure messages. */
  raw: string;
}

/**
 * Sends bytes exactly as given over a fresh TCP connection and reads one response, for requests
 * that `inject` or an HTTP client would refuse to send (bad escapes, broken framing, huge headers).
 * Resolves null when the server closed the connection without answering.
 */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawResponse | null> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      const parsed = parseResponse(Buffer.concat(chunks));
      if (parsed === undefined) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parsed);
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`No complete response within ${timeoutMs} ms: ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
    }, timeoutMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      finish();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(chunks.length === 0 ? null : (parseResponse(Buffer.concat(chunks), true) ?? null));
    });
    socket.write(request);
  });
}

/** undefined while incomplete (unless `ended`). */
function parseResponse(bytes: Buffer, ended = false): RawResponse | undefined {
  const raw = bytes.toString('latin1');
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = bytes.subarray(Buffer.byteLength(raw.slice(0, end + 4), 'latin1'));
  const length = headers['content-length'];
  if (length !== undefined) {
    if (rest.length < Number(length)) return ended ? build() : undefined;
    return build(rest.subarray(0, Number(length)));
  }
  return ended ? build(rest) : undefined;

  function build(body: Buffer = rest): RawResponse {
    return { status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8'), raw };
  }
}
