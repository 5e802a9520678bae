/** Cross-tab coordination: one lock per publishable key, and a channel the tabs talk on. */

export type TabMessage = { type: 'session'; from: string } | { type: 'signed-out'; from: string };

export type Lock = <T>(action: () => Promise<T>) => Promise<T>;

interface LockManagerLike {
  request<T>(name: string, options: { mode: 'exclusive' }, callback: () => Promise<T>): Promise<T>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One holder at a time within this client: two refreshes from one tab never overlap. */
function processLock(): Lock {
  let tail: Promise<unknown> = Promise.resolve();
  return (action) => {
    const run = tail.then(action, action);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * Where Web Locks are missing (insecure contexts, old browsers): a localStorage lease. A tab claims
 * an expired or free lease, waits, and holds it only if its claim is still the one stored; leases
 * expire so a closed tab cannot hold the lock forever.
 */
/** How long a localStorage lease lasts; whatever runs under the lock must finish sooner (see REFRESH_TIMEOUT_MS). */
export const LEASE_MS = 10_000;

function storageLock(storage: Storage, name: string, tabId: string): Lock {
  return async (action) => {
    for (;;) {
      const held = storage.getItem(name);
      const [owner, until] = held ? held.split('|') : [];
      if (!held || Number(until) < Date.now() || owner === tabId) {
        storage.setItem(name, `${tabId}|${Date.now() + LEASE_MS}`);
        await sleep(30);
        if (storage.getItem(name)?.startsWith(`${tabId}|`)) break;
      }
      await sleep(40 + Math.random() * 60);
    }
    try {
      return await action();
    } finally {
      if (storage.getItem(name)?.startsWith(`${tabId}|`)) storage.removeItem(name);
    }
  };
}

export function createLock(name: string, crossTab: boolean, tabId: string): Lock {
  const local = processLock();
  if (!crossTab) return local;
  const locks = (globalThis.navigator as { locks?: LockManagerLike } | undefined)?.locks;
  if (locks) return (action) => local(() => locks.request(name, { mode: 'exclusive' }, action));
  let storage: Storage | undefined;
  try {
    storage = globalThis.localStorage;
  } catch {
    storage = undefined;
  }
  if (storage) {
    const shared = storageLock(storage, `${name}:lock`, tabId);
    return (action) => local(() => shared(action));
  }
  return local;
}

export interface Channel {
  post(message: TabMessage): void;
  close(): void;
}

/** BroadcastChannel where present, else the storage event; nothing in runtimes without tabs. */
export function createChannel(name: string, onMessage: (message: TabMessage) => void): Channel {
  if (typeof BroadcastChannel !== 'undefined') {
    const channel = new BroadcastChannel(name);
    channel.onmessage = (event: MessageEvent<TabMessage>) => onMessage(event.data);
    return { post: (m) => channel.postMessage(m), close: () => channel.close() };
  }
  let storage: Storage | undefined;
  try {
    storage = globalThis.localStorage;
  } catch {
    storage = undefined;
  }
  if (storage && typeof addEventListener === 'function') {
    const key = `${name}:message`;
    const listener = (event: StorageEvent) => {
      if (event.key === key && event.newValue) onMessage(JSON.parse(event.newValue) as TabMessage);
    };
    addEventListener('storage', listener);
    let counter = 0;
    return {
      // The counter makes every message a change, so the event fires even for a repeat.
      post: (m) => storage.setItem(key, JSON.stringify({ ...m, n: ++counter })),
      close: () => removeEventListener('storage', listener),
    };
  }
  return { post: () => undefined, close: () => undefined };
}
