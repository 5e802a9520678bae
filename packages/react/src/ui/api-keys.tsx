import { useCallback, useEffect, useState } from 'react';
import type { ApiKey, CreatedApiKey } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { Field, FORM, FormError, Submit, useForm } from './primitives.js';
import { ReverifyPrompt, useReverification } from './reverify.js';

const DAY = 24 * 3600;
const EXPIRIES: { label: string; seconds: number | null }[] = [
  { label: 'Never', seconds: null },
  { label: '7 days', seconds: 7 * DAY },
  { label: '30 days', seconds: 30 * DAY },
  { label: '90 days', seconds: 90 * DAY },
  { label: '1 year', seconds: 365 * DAY },
];

const date = (ms: number) => new Date(ms).toLocaleDateString();

/**
 * API keys of the signed-in user (`owner: "user"`; creating one may ask to confirm it is them) or of
 * the active organization (`owner: "organization"`, org:manage). A new key's secret is shown once.
 */
export function ApiKeysSection({ owner }: { owner: 'user' | 'organization' }) {
  const client = useGatehouse();
  const keys = owner === 'user' ? client.user.apiKeys : client.organization.apiKeys;
  const [list, setList] = useState<ApiKey[] | null>(null);
  const [values, setValues] = useState({ name: '', scopes: '', expiry: '0' });
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [copied, setCopied] = useState(false);
  const form = useForm(['name', 'scopes', 'expiresInSeconds']);
  const listing = useForm([]);
  const reverification = useReverification();
  const reload = useCallback(async () => setList(await keys.list()), [keys]);
  useEffect(() => void listing.submit(reload)(), [reload]); // eslint-disable-line react-hooks/exhaustive-deps
  const title = owner === 'user' ? 'API keys' : 'Organization API keys';
  return (
    <>
      <section className="gh-section" aria-labelledby={`gh-keys-new-${owner}`}>
        <h2 className="gh-section-title" id={`gh-keys-new-${owner}`}>New API key</h2>
        {created ? (
          <div className="gh-box" role="group" aria-label="New API key">
            <div>
              <div className="gh-name">{created.apiKey.name}</div>
              <div className="gh-muted">Copy the key now: it is shown only once. Keep it somewhere safe.</div>
            </div>
            <code className="gh-code" data-gh-api-key-secret>{created.secret}</code>
            <div className="gh-row">
              <button type="button" className="gh-button gh-secondary gh-small" onClick={() => void navigator.clipboard?.writeText(created.secret).then(() => setCopied(true), () => undefined)}>
                {copied ? 'Copied' : 'Copy'}
              </button>
              <button type="button" className="gh-button gh-small" onClick={() => (setCreated(null), setCopied(false))}>Done</button>
            </div>
          </div>
        ) : (
          <form className="gh-form" noValidate onSubmit={form.submit(async () => {
            const seconds = EXPIRIES[Number(values.expiry)]?.seconds ?? null;
            const scopes = values.scopes.split(/[\s,]+/).filter(Boolean);
            const params = { name: values.name.trim(), ...(scopes.length ? { scopes } : {}), ...(seconds ? { expiresInSeconds: seconds } : {}) };
            setCreated(await reverification.run(() => keys.create(params)));
            setValues({ name: '', scopes: '', expiry: '0' });
            await reload();
          })}>
            <Field label="Name" name="name" placeholder="CI deploy" value={values.name} onChange={(e) => setValues({ ...values, name: e.target.value })} error={form.errors.name} />
            <div className="gh-grid2">
              <Field label="Scopes (optional)" name="scopes" placeholder="invoices:read, invoices:write" value={values.scopes} onChange={(e) => setValues({ ...values, scopes: e.target.value })} error={form.errors.scopes} />
              <div className="gh-field">
                <label className="gh-label" htmlFor={`gh-key-expiry-${owner}`}>Expires</label>
                <select id={`gh-key-expiry-${owner}`} className="gh-select gh-input" value={values.expiry} onChange={(e) => setValues({ ...values, expiry: e.target.value })}>
                  {EXPIRIES.map((x, i) => <option key={x.label} value={i}>{x.label}</option>)}
                </select>
                <p className="gh-field-error" aria-live="polite">{form.errors.expiresInSeconds ?? ''}</p>
              </div>
            </div>
            <FormError error={form.errors[FORM]} />
            <div><Submit busy={form.busy}>Create key</Submit></div>
          </form>
        )}
        {/* Outside the form above: a form inside a form would submit the outer one. */}
        <ReverifyPrompt reverification={reverification} />
      </section>
      <section className="gh-section" aria-labelledby={`gh-keys-${owner}`}>
        <h2 className="gh-section-title" id={`gh-keys-${owner}`}>{title}</h2>
        <FormError error={listing.errors[FORM]} />
        {list && list.length === 0 ? <p className="gh-muted">No API keys yet.</p> : null}
        <ul className="gh-list">
          {(list ?? []).map((k) => (
            <li key={k.id} data-gh-api-key={k.id}>
              <div style={{ flex: 1, minWidth: 0 }}>
                <div className="gh-name gh-ellipsis">
                  {k.name} {k.scopes.map((s) => <span key={s} className="gh-badge">{s}</span>)}
                </div>
                <div className="gh-muted">
                  Created {date(k.createdAt)} · {k.lastUsedAt ? `Last used ${new Date(k.lastUsedAt).toLocaleString()}` : 'Never used'}
                  {k.expiresAt ? ` · ${k.expiresAt < Date.now() ? 'Expired' : 'Expires'} ${date(k.expiresAt)}` : ''}
                </div>
              </div>
              <button type="button" className="gh-button gh-danger gh-small" aria-label={`Revoke ${k.name}`} onClick={() => void listing.submit(async () => {
                await keys.revoke(k.id);
                await reload();
              })()}>Revoke</button>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}
