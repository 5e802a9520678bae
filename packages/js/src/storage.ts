/** What a session persists: the tokens, and when (on this machine's clock) the access token expires. */
export interface StoredSession {
  accessToken: string;
  refreshToken: string;
  /** Milliseconds since the epoch, on the local clock, when the access token expires. */
  expiresAt: number;
  /** Lifetime of the access token in milliseconds. */
  lifetime: number;
  sessionId: string;
  userId: string;
  /** Set when the server answered a refresh with 429: no tab refreshes before this time (ms since the epoch). */
  retryAt?: number;
}

/** A custom storage: any string key-value store, synchronous or not. */
export interface StorageAdapter {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): void | Promise<void>;
  remove(key: string): void | Promise<void>;
}

export type StorageOption = 'localStorage' | 'memory' | StorageAdapter;

export interface SessionStore {
  read(): Promise<StoredSession | null>;
  write(session: StoredSession | null): Promise<void>;
  /** Whether other tabs (or workers) of this origin read the same store. */
  readonly shared: boolean;
}

function parse(raw: string | null | undefined): StoredSession | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as StoredSession;
    return typeof value?.refreshToken === 'string' && typeof value.accessToken === 'string' ? value : null;
  } catch {
    return null;
  }
}

function adapterStore(adapter: StorageAdapter, key: string, shared: boolean): SessionStore {
  return {
    shared,
    read: async () => parse(await adapter.get(key)),
    write: async (session) => {
      if (session) await adapter.set(key, JSON.stringify(session));
      else await adapter.remove(key);
    },
  };
}

export function memoryAdapter(): StorageAdapter {
  const values = new Map<string, string>();
  return { get: (k) => values.get(k) ?? null, set: (k, v) => void values.set(k, v), remove: (k) => void values.delete(k) };
}

function browserLocalStorage(): Storage | undefined {
  try {
    return typeof localStorage === 'undefined' ? undefined : localStorage;
  } catch {
    return undefined; // e.g. storage disabled: reading the property throws
  }
}

/**
 * IndexedDB: a write committed by one tab is what the next reader sees, at once. Chromium delivers
 * localStorage writes to other tabs asynchronously, so a tab taking the refresh lock right after
 * another could still read the token just rotated; IndexedDB does not have that gap. Where IndexedDB
 * exists but will not open (private modes, storage blocked, a corrupt profile), the client keeps
 * working on `fallback` instead of failing every load.
 */
function indexedDbStore(key: string, fallback: SessionStore): SessionStore {
  let opening: Promise<IDBDatabase | null> | undefined;
  const open = () =>
    (opening ??= new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open('gatehouse', 1);
      request.onupgradeneeded = () => request.result.createObjectStore('sessions');
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    }).catch(() => null));
  const run = <T>(db: IDBDatabase, mode: IDBTransactionMode, action: (store: IDBObjectStore) => IDBRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const tx = db.transaction('sessions', mode);
      const request = action(tx.objectStore('sessions'));
      tx.oncomplete = () => resolve(request.result as T);
      tx.onerror = tx.onabort = () => reject(tx.error);
    });
  return {
    shared: true,
    read: async () => {
      const db = await open();
      return db ? parse(await run<string | undefined>(db, 'readonly', (s) => s.get(key))) : fallback.read();
    },
    write: async (session) => {
      const db = await open();
      if (!db) return fallback.write(session);
      await run(db, 'readwrite', (s) => (session ? s.put(JSON.stringify(session), key) : s.delete(key)));
    },
  };
}

/** A page with a document: a browser tab. Node, Deno and workers get memory by default. */
function inBrowserPage(): boolean {
  return typeof window !== 'undefined' && typeof document !== 'undefined';
}

/** The store a storage option means in this runtime. */
export function sessionStore(option: StorageOption | undefined, key: string): SessionStore {
  if (option === 'memory' || (option === undefined && !inBrowserPage())) return adapterStore(memoryAdapter(), key, false);
  if (option && typeof option === 'object') return adapterStore(option, key, true);
  const local = browserLocalStorage();
  const localStore = local
    ? adapterStore({ get: (k) => local.getItem(k), set: (k, v) => local.setItem(k, v), remove: (k) => local.removeItem(k) }, key, true)
    : undefined;
  if (typeof indexedDB !== 'undefined') return indexedDbStore(key, localStore ?? adapterStore(memoryAdapter(), key, false));
  if (localStore) return localStore;
  if (option === undefined) return adapterStore(memoryAdapter(), key, false);
  throw new TypeError(
    "storage: 'localStorage' needs a browser: this runtime has neither IndexedDB nor localStorage. Use storage: 'memory'.",
  );
}
