import { useEffect, useState } from 'react';
import { GatehouseError } from '@gatehouse/js';
import { useGatehouse, useGatehouseState } from '../context.js';
import { FORM, FormError, useForm } from './primitives.js';
import { ReverifyPrompt, useReverification } from './reverify.js';
import { useEnvironment } from './sign-in.js';

/**
 * The "Require two-step verification" switch of OrganizationProfile (org:manage). Turning it on needs
 * this session to have verified a second factor (`second_factor_required`): a user with an
 * authenticator app is asked for a code inline; one without is told to add one first.
 */
export function RequireMfa() {
  const client = useGatehouse();
  const { environment } = useEnvironment();
  const { organization, user } = useGatehouseState();
  const organizationId = organization?.id;
  const [required, setRequired] = useState<boolean | null>(null);
  const form = useForm(['mfaRequired']);
  const reverification = useReverification();
  useEffect(() => {
    void form.submit(async () => setRequired((await client.organization.get()).mfaRequired))();
  }, [client, organizationId]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!environment || environment.mfa === 'off' || required === null) return null;
  const toggle = () =>
    void form.submit(async () => {
      // Only a user with an authenticator app can answer the refusal here; anyone else reads it as it is.
      const secondFactor = user?.twoFactorEnabled ?? false;
      try {
        const updated = await reverification.run(() => client.organization.update({ mfaRequired: !required }), { secondFactor });
        setRequired(updated.mfaRequired);
      } catch (error) {
        if (!(error instanceof GatehouseError) || error.code !== 'second_factor_required') throw error;
        const message =
          'You have not verified a second factor in this session, so you cannot require one of others: turn on two-step verification in your account (Security), then try again.';
        throw new GatehouseError({ status: error.status, code: error.code, message });
      }
    })();
  return (
    <section className="gh-section" aria-labelledby="gh-org-mfa">
      <h2 className="gh-section-title" id="gh-org-mfa">Security</h2>
      <div className="gh-row" style={{ alignItems: 'flex-start' }}>
        <div style={{ flex: 1 }}>
          <div className="gh-name" id="gh-org-mfa-label">Require two-step verification</div>
          <div className="gh-muted">Members must verify an authenticator app or a passkey before they can act in this organization.</div>
        </div>
        <button type="button" role="switch" className="gh-switch" aria-checked={required} aria-labelledby="gh-org-mfa-label" disabled={form.busy} onClick={toggle}>
          <span aria-hidden="true" />
        </button>
      </div>
      <ReverifyPrompt reverification={reverification} />
      <FormError error={form.errors[FORM] ?? form.errors.mfaRequired} />
    </section>
  );
}
