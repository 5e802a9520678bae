import { useState } from 'react';
import type { Gatehouse } from '@gatehouse/js';
import { openApi } from '../api.js';
import { ErrorMessage, useAction } from '../ui.js';

/** `/console/setup?token=…`: the printed setup link (the first operator) or an operator invitation. */
export function SetupPage({ client, onDone }: { client: Gatehouse; onDone: () => void }) {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  // An invitation fixes the address; the printed setup link asks for one.
  const invitation = token.startsWith('gh_invite_');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [firstName, setFirstName] = useState('');
  const { pending, error, run } = useAction();

  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const operator = await openApi('POST /v1/console/setup', {
        body: { token, password, ...(email ? { email } : {}), ...(firstName ? { firstName } : {}) },
      });
      await client.signIn.password({ email: operator.email, password });
      onDone();
    });
  };

  return (
    <main className="center">
      <form className="card narrow" onSubmit={submit} aria-labelledby="setup-title">
        <h1 id="setup-title">{invitation ? 'Accept your operator invitation' : 'Set up your operator account'}</h1>
        <p className="muted">
          This one-time link creates an operator of this Gatehouse: someone who manages its projects in the console.
          {invitation ? ' You sign in with the address the invitation was sent to.' : ' It creates the first operator.'}
        </p>
        {!token && <p className="error">This page needs the link's token. Open the whole link printed at start or sent by email.</p>}
        {!invitation && (
          <label>
            Email
            <input type="email" required autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} name="email" />
          </label>
        )}
        <label>
          First name (optional)
          <input value={firstName} autoComplete="given-name" onChange={(e) => setFirstName(e.target.value)} name="firstName" />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            name="password"
          />
        </label>
        <ErrorMessage error={error} />
        <button type="submit" className="primary" disabled={pending || !token}>
          {pending ? 'Creating…' : 'Create operator and sign in'}
        </button>
      </form>
    </main>
  );
}
