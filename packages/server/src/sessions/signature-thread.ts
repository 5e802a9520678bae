import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * RS256 signatures made on a thread of their own. An RSA-2048 signature costs 0.3–0.7 ms of CPU,
 * about half of what a refresh costs the event loop, and the event loop is the refresh's bottleneck:
 * signing beside it lets a node use a second core for tokens. Not libuv's pool (`crypto.sign` with a
 * callback): password hashes wait there for tens of milliseconds under sign-in load, and a refresh
 * must not wait behind them. ES256 and EdDSA sign in tens of microseconds, less than the trip here.
 *
 * The thread starts on the first signature and holds each private key once (a `KeyObject` is sent,
 * never exported). If it fails, its pending signatures are refused and the next one starts a new thread.
 */
export class SignatureThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve: (signature: string) => void; reject: (error: Error) => void }>();
  /** Requests of this turn of the event loop, sent together: one message each way, not one per token. */
  private queued: { id: number; data: string; key: KeyObject }[] = [];
  private nextRequest = 0;
  /** The number each key has in the current thread; a new thread starts without any. */
  private keyNumbers = new WeakMap<KeyObject, number>();
  private nextKey = 0;

  /** `sign('sha256', data, key)` off the event loop, base64url-encoded. */
  signRs256(data: string, key: KeyObject): Promise<string> {
    const id = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.queued.push({ id, data, key }) === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = () => {
    const worker = this.worker ?? this.start();
    const batch = this.queued.map(({ id, data, key }): SignRequest => {
      const known = this.keyNumbers.get(key);
      if (known !== undefined) return { id, data, keyNumber: known };
      const keyNumber = this.nextKey++;
      this.keyNumbers.set(key, keyNumber);
      return { id, data, keyNumber, key };
    });
    this.queued = [];
    worker.ref();
    worker.postMessage(batch);
  };

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    this.worker = worker;
    this.keyNumbers = new WeakMap();
    worker.on('message', (replies: SignReply[]) => {
      for (const reply of replies) {
        const waiting = this.pending.get(reply.id);
        if (!waiting) continue;
        this.pending.delete(reply.id);
        if (reply.signature !== undefined) waiting.resolve(reply.signature);
        else waiting.reject(new Error(`Signing failed: ${reply.error}`));
      }
      if (this.pending.size === 0) worker.unref(); // an idle signer never keeps the process alive
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      const waiting = [...this.pending.values()];
      this.pending.clear();
      for (const { reject } of waiting) reject(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The signature thread exited (code ${code}).`)));
    return worker;
  }
}

interface SignRequest {
  id: number;
  data: string;
  keyNumber: number;
  /** Sent with the first request for a key. */
  key?: KeyObject;
}

interface SignReply {
  id: number;
  signature?: string;
  error?: string;
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { sign } = require('node:crypto');
const keys = new Map();
parentPort.on('message', (batch) => {
  parentPort.postMessage(batch.map((request) => {
    if (request.key) keys.set(request.keyNumber, request.key);
    try {
      return { id: request.id, signature: sign('sha256', Buffer.from(request.data), keys.get(request.keyNumber)).toString('base64url') };
    } catch (error) {
      return { id: request.id, error: String(error && error.message) };
    }
  }));
});
`;
