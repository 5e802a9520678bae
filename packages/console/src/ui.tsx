import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ApiFailure } from './api.js';

/** Loads data with `load`, re-running when `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (value) => live && setData(value),
      (e: unknown) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]); // eslint-disable-line react-hooks/exhaustive-deps
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, reload, setData };
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
