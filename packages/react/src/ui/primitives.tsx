import { useId, useState, type FormEvent, type InputHTMLAttributes, type ReactNode } from 'react';
import { GatehouseError } from '@gatehouse/js';
import { useGatehouseContext, variableStyle, type Appearance } from '../context.js';

/** The themed container every component renders in; `appearance` overrides the provider's. */
export function Root(props: { appearance?: Appearance | undefined; className?: string; children: ReactNode }) {
  const base = useGatehouseContext().appearance;
  const theme = props.appearance?.theme ?? base.theme ?? 'light';
  const style = variableStyle({ ...base.variables, ...props.appearance?.variables });
  return (
    <div className={`gh-root ${props.className ?? ''}`} data-theme={theme} style={style}>
      {props.children}
    </div>
  );
}

export function useAppearance(local?: Appearance): Appearance {
  const base = useGatehouseContext().appearance;
  return { ...base, ...local, variables: { ...base.variables, ...local?.variables } };
}

export function Header(props: { title: string; subtitle?: string | undefined; logoUrl?: string | undefined }) {
  return (
    <div className="gh-header">
      {props.logoUrl ? <img className="gh-logo" src={props.logoUrl} alt="" /> : null}
      <h1 className="gh-title">{props.title}</h1>
      {props.subtitle ? <p className="gh-subtitle">{props.subtitle}</p> : null}
    </div>
  );
}

export type Errors = Record<string, string>;
/** The key of an error that names no field of the form. */
export const FORM = '_form';

/**
 * Places a refusal next to the field it names: `details.fields` of a 400, or a field the message
 * quotes; otherwise it is the form's error.
 */
export function errorsFrom(error: unknown, fields: string[]): Errors {
  const message = error instanceof Error ? error.message : 'Something went wrong. Try again.';
  if (error instanceof GatehouseError) {
    const named = (error.details as { fields?: unknown } | undefined)?.fields;
    const candidates = Array.isArray(named) ? named.map(String) : [];
    for (const field of fields) if (message.includes(`"${field}"`)) candidates.push(field);
    const field = candidates.map((c) => c.replace(/^\//, '').split(/[./]/)[0]!).find((c) => fields.includes(c));
    if (field) return { [field]: message };
    if (error.code === 'invalid_credentials' && fields.includes('password')) return { password: message };
  }
  return { [FORM]: message };
}

/** Form state: submitting, errors by field, one submit handler that maps refusals to fields. */
export function useForm(fields: string[]) {
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const submit = (action: () => Promise<unknown>) => async (event?: FormEvent) => {
    event?.preventDefault();
    if (busy) return;
    setBusy(true);
    setErrors({});
    try {
      await action();
    } catch (error) {
      setErrors(errorsFrom(error, fields));
    } finally {
      setBusy(false);
    }
  };
  return { errors, setErrors, busy, submit };
}

type FieldProps = { label: string; name: string; error?: string | undefined; hint?: ReactNode } & Omit<InputHTMLAttributes<HTMLInputElement>, 'name'>;

/** A labelled input whose error is announced and tied to it (aria-describedby). */
export function Field({ label, name, error, hint, ...input }: FieldProps) {
  const id = useId();
  const errorId = `${id}-error`;
  return (
    <div className="gh-field">
      <label className="gh-label" htmlFor={id}>
        {label}
      </label>
      <input
        id={id}
        name={name}
        className="gh-input"
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        {...input}
      />
      {hint}
      <p id={errorId} className="gh-field-error" aria-live="polite">
        {error ?? ''}
      </p>
    </div>
  );
}

/** The form-level error region, always present so screen readers hear what appears in it. */
export function FormError({ error }: { error?: string | undefined }) {
  return (
    <p className="gh-form-error" role="alert" aria-live="assertive">
      {error ?? ''}
    </p>
  );
}

export function Submit(props: { busy: boolean; children: ReactNode; className?: string }) {
  return (
    <button type="submit" className={`gh-button ${props.className ?? ''}`} disabled={props.busy} aria-busy={props.busy}>
      {props.busy ? <span className="gh-spinner" aria-hidden="true" /> : null}
      {props.children}
    </button>
  );
}

export function initials(text: string): string {
  const parts = text.replace(/@.*/, '').split(/[\s._-]+/).filter(Boolean);
  return ((parts[0]?.[0] ?? '?') + (parts[1]?.[0] ?? '')).toUpperCase();
}

export function Avatar(props: { imageUrl: string | null | undefined; name: string; size?: number; square?: boolean }) {
  const size = props.size ?? 32;
  const className = `gh-avatar ${props.square ? 'gh-square' : ''}`;
  const style = { width: size, height: size, fontSize: Math.round(size * 0.4) };
  if (props.imageUrl) return <img className={className} style={style} src={props.imageUrl} alt={props.name} />;
  return (
    <span className={className} style={style} role="img" aria-label={props.name}>
      {initials(props.name)}
    </span>
  );
}

export function displayName(user: { firstName: string | null; lastName: string | null; email: string }): string {
  return [user.firstName, user.lastName].filter(Boolean).join(' ') || user.email;
}

/** Follows a URL after a flow ends, if one was given. */
export function go(url: string | undefined): void {
  if (url && typeof location !== 'undefined') location.assign(url);
}
