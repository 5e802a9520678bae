import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ApiFailure } from './api.js';

/**
 * Loads data with `load`, re-running when `deps` change; `reload` runs it again. Data loaded for
 * other `deps` is not shown (a page of another cursor or environment never stands in for this one);
 * a reload keeps the current data on screen until the new arrives.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const key = JSON.stringify(deps);
  const [loaded, setLoaded] = useState<{ key: string; value: T } | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (value) => live && setLoaded({ key, value }),
      (e: unknown) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [key, tick]); // eslint-disable-line react-hooks/exhaustive-deps
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const setData = useCallback((value: T) => setLoaded({ key, value }), [key]);
  const data = loaded?.key === key ? loaded.value : undefined;
  return { data, error, reload, setData };
}

/** What `useLoad` (or `usePages`) answers: the data once loaded, or the error. */
export interface LoadState<T> {
  data: T | undefined;
  error: string | null;
}

/**
 * The loading / error / empty triad of every listing: the server's message, "Loading {what}…", or
 * the children drawn from the data. `empty`, when given and the listing has no row, is said instead
 * (tables say it in a row of their own: Table's `empty`).
 */
export function Loaded<T>(props: { state: LoadState<T>; what: string; empty?: ReactNode; children: (data: T) => ReactNode }) {
  const { state, what, empty, children } = props;
  if (state.error || state.data === undefined) return <Pending state={state} what={what} />;
  const rows = (state.data as { data?: unknown }).data;
  if (empty !== undefined && Array.isArray(rows) && rows.length === 0) return <p className="muted">{empty}</p>;
  return <>{children(state.data)}</>;
}

/** Until the data is there: its error, or "Loading {what}…" (a page that is one record waits with it). */
export function Pending({ state, what }: { state: LoadState<unknown>; what: string }) {
  return state.error ? <ErrorMessage error={state.error} /> : <Loading what={what} />;
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiFailure || error instanceof Error) return error.message;
  return String(error);
}

/** Runs an action, keeping its pending state and its error (shown as the server's message). */
export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setPending(true);
    setError(null);
    try {
      return await action();
    } catch (e) {
      setError(messageOf(e));
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, setError };
}

export function ErrorMessage({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/**
 * A button whose action waits for a confirmation in a modal dialog (Escape or Cancel backs out).
 * Every destructive action of the console goes through one.
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  message: ReactNode;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown>;
  className?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { pending, error, run, setError } = useAction();
  const close = () => {
    setError(null);
    dialog.current?.close();
  };
  return (
    <>
      <button type="button" className={props.className ?? 'danger'} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId} onClose={() => setError(null)}>
        <h2 id={titleId}>{props.title}</h2>
        <div>{props.message}</div>
        <ErrorMessage error={error} />
        <div className="row end">
          {/* Focus starts on Cancel: Enter alone never destroys anything. */}
          <button type="button" onClick={close} autoFocus>
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            disabled={pending}
            onClick={() =>
              void run(async () => {
                await props.onConfirm();
                dialog.current?.close();
              })
            }
          >
            {props.confirmLabel ?? props.label}
          </button>
        </div>
      </dialog>
    </>
  );
}

/** A value with a Copy button (the clipboard API; a message says when the browser refuses it). */
export function Copyable({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <div className="copyable">
      <code aria-label={label} data-testid={label}>
        {value}
      </code>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(value).then(
            () => setState('copied'),
            () => setState('failed'),
          )
        }
      >
        {state === 'copied' ? 'Copied' : 'Copy'}
      </button>
      {state === 'failed' && <span className="error">The browser refused the clipboard; select the text instead.</span>}
    </div>
  );
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card">
      <div className="row between">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/**
 * A table with these column headings; `actions` adds a last column of buttons, named for screen
 * readers only; `empty`, when given, is a row across every column that says there is nothing yet.
 */
export function Table(props: { headings: string[]; actions?: boolean; empty?: ReactNode; children: ReactNode }) {
  const { headings, actions = false, empty, children } = props;
  return (
    <table>
      <thead>
        <tr>
          {headings.map((heading) => (
            <th key={heading}>{heading}</th>
          ))}
          {actions && (
            <th>
              <span className="sr-only">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {children}
        {empty !== undefined && empty !== false && (
          <tr>
            <td colSpan={headings.length + (actions ? 1 : 0)} className="muted">
              {empty}
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}
