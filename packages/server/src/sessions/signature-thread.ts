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
 * never exported). If it fails, its pending signatures are refused (their callers sign inline) and
 * the next signature starts a new thread.
 */
export class SignatureThread {
  private worker: Worker | undefined;
  /** The live thread with the signatures sent to it and not yet answered. */
  private running: { worker: Worker; pending: Map<number, Pending> } | undefined;
  /** Signatures asked for in this turn of the event loop: sent together, one message each way. */
  private queued: Pending[] = [];
  private nextRequest = 0;
  /** The number each key has in the current thread; a new thread starts without any. */
  private keyNumbers = new WeakMap<KeyObject, number>();
  private nextKey = 0;
  private closed = false;

  /** `sign('sha256', data, key)` off the event loop, base64url-encoded. Refused once closed. */
  signRs256(data: string, key: KeyObject): Promise<string> {
    if (this.closed) return Promise.reject(new Error('The signature thread is closed.'));
    return new Promise((resolve, reject) => {
      if (this.queued.push({ id: this.nextRequest++, data, key, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  /** Ends the thread; signatures still pending there are refused (their callers sign inline). */
  async close(): Promise<void> {
    this.closed = true;
    const queued = this.queued;
    this.queued = [];
    for (const request of queued) request.reject(new Error('The signature thread is closed.'));
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private readonly flush = () => {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    try {
      const { worker, pending } = this.current();
      const requests = batch.map(({ id, data, key }): SignRequest => {
        const known = this.keyNumbers.get(key);
        if (known !== undefined) return { id, data, keyNumber: known };
        const keyNumber = this.nextKey++;
        this.keyNumbers.set(key, keyNumber);
        return { id, data, keyNumber, key };
      });
      for (const request of batch) pending.set(request.id, request);
      worker.ref();
      worker.postMessage(requests);
    } catch (error) {
      // No thread (workers not allowed, out of resources): these are signed by their callers.
      for (const request of batch) request.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };

  /** The live thread, started if there is none; each thread has its own pending signatures. */
  private current(): { worker: Worker; pending: Map<number, Pending> } {
    if (this.running && this.running.worker === this.worker) return this.running;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    const pending = new Map<number, Pending>();
    this.worker = worker;
    this.running = { worker, pending };
    this.keyNumbers = new WeakMap();
    worker.on('message', (replies: SignReply[]) => {
      for (const reply of replies) {
        const waiting = pending.get(reply.id);
        if (!waiting) continue;
        pending.delete(reply.id);
        if (reply.signature !== undefined) waiting.resolve(reply.signature);
        else waiting.reject(new Error(`Signing failed: ${reply.error}`));
      }
      if (pending.size === 0) worker.unref(); // an idle signer never keeps the process alive
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      const waiting = [...pending.values()];
      pending.clear();
      for (const { reject } of waiting) reject(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The signature thread exited (code ${code}).`)));
    return this.running;
  }
}

interface Pending {
  id: number;
  data: string;
  key: KeyObject;
  resolve: (signature: string) => void;
  reject: (error: Error) => void;
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
