import { useCallback, useEffect, useState } from 'react';
import type { MfaStatus, SessionView, TotpSetup } from '@gatehouse/js';
import { useGatehouse, useGatehouseState } from '../context.js';
import { Field, FORM, FormError, Submit, useForm } from './primitives.js';
import { PasskeysSection } from './passkeys.js';
import { QrCode } from './qr.js';
import { ReverifyPrompt, useReverification } from './reverify.js';
import { useEnvironment } from './sign-in.js';
import { describeAgent, describeFactors } from './user-agent.js';

/** UserProfile's Security tab: password, passkeys, two-step verification, active devices. */
export function SecurityTab() {
  const user = useGatehouseState().user!;
  const { environment } = useEnvironment();
  // A password change signs the other devices out, a verified code joins this session's factors: the list reloads.
  const [generation, setGeneration] = useState(0);
  const changed = () => setGeneration((g) => g + 1);
  return (
    <>
      {user.passwordEnabled ? <PasswordSection onChanged={changed} /> : null}
      <PasskeysSection />
      {environment && environment.mfa !== 'off' ? <TwoFactorSection onChanged={changed} /> : null}
      <SessionsSection generation={generation} />
    </>
  );
}

function PasswordSection({ onChanged }: { onChanged: () => void }) {
  const client = useGatehouse();
  const form = useForm(['currentPassword', 'newPassword']);
  const [values, setValues] = useState({ currentPassword: '', newPassword: '' });
  const [changed, setChanged] = useState(false);
  return (
    <section className="gh-section" aria-labelledby="gh-password-title">
      <h2 className="gh-section-title" id="gh-password-title">Password</h2>
      <form className="gh-form" noValidate onSubmit={form.submit(async () => {
        setChanged(false);
        await client.user.changePassword(values);
        setValues({ currentPassword: '', newPassword: '' });
        setChanged(true);
        onChanged();
      })}>
        <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" value={values.currentPassword} onChange={(e) => setValues({ ...values, currentPassword: e.target.value })} error={form.errors.currentPassword} />
        <Field label="New password" name="newPassword" type="password" autoComplete="new-password" value={values.newPassword} onChange={(e) => setValues({ ...values, newPassword: e.target.value })} error={form.errors.newPassword} />
        <FormError error={form.errors[FORM]} />
        <div className="gh-row">
          <Submit busy={form.busy}>Change password</Submit>
          <p className="gh-success" role="status">{changed ? 'Password changed. Your other devices were signed out.' : ''}</p>
        </div>
      </form>
    </section>
  );
}

/** The base32 secret in groups of four, easier to type into an app. */
const grouped = (secret: string) => secret.replace(/(.{4})/g, '$1 ').trim();

function TwoFactorSection({ onChanged }: { onChanged: () => void }) {
  const client = useGatehouse();
  const [status, setStatus] = useState<MfaStatus | null>(null);
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const form = useForm(['code']);
  const reverification = useReverification();
  const load = useCallback(async () => setStatus(await client.user.mfa.get()), [client]);
  const reload = async () => {
    await load();
    onChanged();
  };
  useEffect(() => void form.submit(load)(), [load]); // eslint-disable-line react-hooks/exhaustive-deps
  const enabled = status?.totp.enabled ?? false;
  return (
    <section className="gh-section" aria-labelledby="gh-mfa-title">
      <h2 className="gh-section-title" id="gh-mfa-title">Two-step verification</h2>
      {codes ? (
        <BackupCodesShown codes={codes} onDone={() => setCodes(null)} />
      ) : setup ? (
        <div className="gh-box">
          <p className="gh-muted" style={{ margin: 0 }}>Scan this QR code with your authenticator app, or enter the key by hand. Then type the 6-digit code it shows.</p>
          <div className="gh-row" style={{ alignItems: 'flex-start', flexWrap: 'wrap' }}>
            <QrCode value={setup.otpauthUrl} size={168} />
            <div style={{ flex: 1, minWidth: 200 }}>
              <div className="gh-label">Setup key</div>
              <code className="gh-code" data-gh-secret={setup.secret}>{grouped(setup.secret)}</code>
            </div>
          </div>
          <form className="gh-form" noValidate onSubmit={form.submit(async () => {
            const enabledNow = await client.user.mfa.totp.verify(code.replace(/\s/g, ''));
            setSetup(null);
            setCode('');
            setCodes(enabledNow.backupCodes);
            await reload();
          })}>
            <Field label="Code from your app" name="code" inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} error={form.errors.code} />
            <FormError error={form.errors[FORM]} />
            <div className="gh-row">
              <Submit busy={form.busy}>Turn on</Submit>
              <button type="button" className="gh-button gh-secondary" onClick={() => (setSetup(null), setCode(''), form.setErrors({}))}>Cancel</button>
            </div>
          </form>
        </div>
      ) : (
        <>
          <ul className="gh-list">
            <li>
              <div style={{ flex: 1, minWidth: 0 }}>
                <div className="gh-name">Authenticator app {enabled ? <span className="gh-badge gh-on">On</span> : null}</div>
                <div className="gh-muted">
                  {enabled
                    ? `Added ${status?.totp.createdAt ? new Date(status.totp.createdAt).toLocaleDateString() : ''}`.trim()
                    : 'Codes from an app such as 1Password, Google Authenticator or Authy, asked for after your password.'}
                </div>
              </div>
              {status && !enabled ? (
                <button type="button" className="gh-button gh-small" disabled={form.busy} onClick={() => void form.submit(async () => setSetup(await client.user.mfa.totp.create()))()}>
                  Set up
                </button>
              ) : null}
              {enabled ? (
                <button type="button" className="gh-button gh-danger gh-small" disabled={form.busy || !!reverification.pending} onClick={() => void form.submit(async () => {
                  await reverification.run(() => client.user.mfa.totp.remove());
                  await reload();
                })()}>
                  Turn off
                </button>
              ) : null}
            </li>
            {enabled ? (
              <li>
                <div style={{ flex: 1, minWidth: 0 }}>
                  <div className="gh-name">Backup codes</div>
                  <div className="gh-muted">{status?.backupCodes.remaining ?? 0} of 10 left. Each works once, when your phone is not at hand.</div>
                </div>
                <button type="button" className="gh-button gh-secondary gh-small" disabled={form.busy || !!reverification.pending} onClick={() => void form.submit(async () => {
                  setCodes((await reverification.run(() => client.user.mfa.backupCodes.regenerate())).backupCodes);
                  await reload();
                })()}>
                  New codes
                </button>
              </li>
            ) : null}
          </ul>
          <ReverifyPrompt reverification={reverification} />
          <FormError error={form.errors[FORM] ?? form.errors.code} />
        </>
      )}
    </section>
  );
}

/** The backup codes, shown this once: to copy or download. */
function BackupCodesShown({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = `${codes.join('\n')}\n`;
  const [copied, setCopied] = useState(false);
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = Object.assign(document.createElement('a'), { href: url, download: 'backup-codes.txt' });
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  };
  return (
    <div className="gh-box" role="group" aria-labelledby="gh-backup-title">
      <div>
        <div className="gh-name" id="gh-backup-title">Save your backup codes</div>
        <div className="gh-muted">They are shown only now. Each one signs you in once if you lose your phone.</div>
      </div>
      <ul className="gh-codes" aria-label="Backup codes">
        {codes.map((c) => <li key={c}>{c}</li>)}
      </ul>
      <div className="gh-row" style={{ flexWrap: 'wrap' }}>
        <button type="button" className="gh-button gh-secondary gh-small" onClick={download}>Download</button>
        <button type="button" className="gh-button gh-secondary gh-small" onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true), () => undefined)}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="gh-button gh-small" onClick={onDone}>I have saved them</button>
      </div>
    </div>
  );
}

function SessionsSection({ generation }: { generation: number }) {
  const client = useGatehouse();
  const [sessions, setSessions] = useState<SessionView[] | null>(null);
  const list = useForm([]);
  useEffect(() => {
    void list.submit(async () => setSessions(await client.sessions.list()))();
  }, [client, generation]); // eslint-disable-line react-hooks/exhaustive-deps
  return (
    <section className="gh-section" aria-labelledby="gh-sessions-title">
      <h2 className="gh-section-title" id="gh-sessions-title">Active devices</h2>
      <FormError error={list.errors[FORM]} />
      <ul className="gh-list">
        {(sessions ?? []).map((s) => (
          <li key={s.id} data-gh-session={s.id}>
            <div style={{ flex: 1, minWidth: 0 }}>
              <div className="gh-name gh-ellipsis">{describeAgent(s.userAgent)} {s.current ? <span className="gh-badge">This device</span> : null}</div>
              <div className="gh-muted">
                {s.amr.length ? `${describeFactors(s.amr)} · ` : ''}Last active {new Date(s.lastActiveAt).toLocaleString()}
              </div>
            </div>
            {s.current ? null : (
              <button type="button" className="gh-button gh-danger gh-small" aria-label={`Sign out ${describeAgent(s.userAgent)}`} onClick={() => void list.submit(async () => {
                await client.sessions.revoke(s.id);
                setSessions(await client.sessions.list());
              })()}>Sign out</button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
