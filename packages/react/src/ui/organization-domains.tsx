import { useCallback, useEffect, useState } from 'react';
import type { EnrollmentMode, OrganizationDomain } from '@gatehouse/js';
import { useGatehouse } from '../context.js';
import { Field, FORM, FormError, Submit, useForm } from './primitives.js';

const MODES: { value: EnrollmentMode; label: string }[] = [
  { value: 'manual_invitation', label: 'Invite manually' },
  { value: 'automatic_invitation', label: 'Invite automatically' },
  { value: 'automatic_suggestion', label: 'Suggest to join' },
];

/**
 * OrganizationProfile's Domains tab (org:manage): verified domains enrol colleagues by their email.
 * A domain added here is verified by a code emailed to an address at it.
 */
export function DomainsTab() {
  const client = useGatehouse();
  const [domains, setDomains] = useState<OrganizationDomain[] | null>(null);
  const [values, setValues] = useState({ name: '', enrollmentMode: 'automatic_suggestion' as EnrollmentMode, email: '' });
  const add = useForm(['name', 'enrollmentMode', 'email']);
  const list = useForm([]);
  const reload = useCallback(async () => setDomains(await client.organization.domains.list()), [client]);
  useEffect(() => void list.submit(reload)(), [reload]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <>
      <section className="gh-section" aria-labelledby="gh-domains">
        <h2 className="gh-section-title" id="gh-domains">Domains</h2>
        <p className="gh-muted" style={{ marginTop: 0 }}>People who prove an address at a verified domain are invited or suggested to join, as its mode says.</p>
        <FormError error={list.errors[FORM]} />
        {domains && domains.length === 0 ? <p className="gh-muted">No domains yet.</p> : null}
        <ul className="gh-list" aria-labelledby="gh-domains">
          {(domains ?? []).map((d) => <DomainRow key={d.id} domain={d} reload={reload} />)}
        </ul>
      </section>
      <section className="gh-section" aria-labelledby="gh-add-domain">
        <h2 className="gh-section-title" id="gh-add-domain">Add a domain</h2>
        <form className="gh-form" noValidate onSubmit={add.submit(async () => {
          await client.organization.domains.create(values);
          setValues({ ...values, name: '', email: '' });
          await reload();
        })}>
          <div className="gh-grid2">
            <Field label="Domain" name="name" placeholder="example.com" value={values.name} onChange={(e) => setValues({ ...values, name: e.target.value.trim().toLowerCase() })} error={add.errors.name} />
            <div className="gh-field">
              <label className="gh-label" htmlFor="gh-domain-mode">Enrollment</label>
              <select id="gh-domain-mode" className="gh-select" style={{ padding: '9px 8px' }} value={values.enrollmentMode} onChange={(e) => setValues({ ...values, enrollmentMode: e.target.value as EnrollmentMode })}>
                {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
              </select>
            </div>
          </div>
          <Field label="Your address at that domain (it gets the code)" name="email" type="email" value={values.email} onChange={(e) => setValues({ ...values, email: e.target.value })} error={add.errors.email} />
          <FormError error={add.errors[FORM] ?? add.errors.enrollmentMode} />
          <div><Submit busy={add.busy}>Add domain</Submit></div>
        </form>
      </section>
    </>
  );
}

function DomainRow({ domain, reload }: { domain: OrganizationDomain; reload: () => Promise<void> }) {
  const client = useGatehouse();
  const form = useForm(['code']);
  const [code, setCode] = useState('');
  return (
    <li style={{ flexWrap: 'wrap' }}>
      <div style={{ flex: 1, minWidth: 0 }}>
        <div className="gh-name gh-ellipsis">{domain.name}</div>
        <span className="gh-badge">{domain.verified ? 'Verified' : 'Unverified'}</span>
      </div>
      <label className="gh-visually-hidden" htmlFor={`gh-mode-${domain.id}`}>Enrollment of {domain.name}</label>
      <select id={`gh-mode-${domain.id}`} className="gh-select" value={domain.enrollmentMode} onChange={(e) => void form.submit(async () => {
        await client.organization.domains.update(domain.id, e.target.value as EnrollmentMode);
        await reload();
      })()}>
        {MODES.map((m) => <option key={m.value} value={m.value}>{m.label}</option>)}
      </select>
      <button type="button" className="gh-button gh-danger gh-small" aria-label={`Remove ${domain.name}`} onClick={() => void form.submit(async () => {
        await client.organization.domains.remove(domain.id);
        await reload();
      })()}>Remove</button>
      {domain.verified ? null : (
        <form className="gh-row" style={{ width: '100%', alignItems: 'flex-start' }} noValidate onSubmit={form.submit(async () => {
          await client.organization.domains.verify(domain.id, code);
          await reload();
        })}>
          <div style={{ flex: 1 }}>
            <Field label={`Code emailed for ${domain.name}`} name="code" inputMode="numeric" autoComplete="one-time-code" maxLength={6} value={code} onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))} error={form.errors.code ?? form.errors[FORM]} />
          </div>
          <div style={{ paddingTop: 24 }}><Submit busy={form.busy} className="gh-small">Verify</Submit></div>
        </form>
      )}
    </li>
  );
}
