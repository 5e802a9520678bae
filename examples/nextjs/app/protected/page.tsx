import { auth, currentUser } from '@gatehouse/nextjs/server';
import { notes } from '../notes';
import { saveNote } from './actions';

// Server-rendered for the signed-in user only: auth.protect() verifies the session cookie here,
// whatever the proxy did, and sends a signed-out visitor to /sign-in.
export default async function Protected() {
  const { userId, orgId } = await auth.protect();
  // The user's record, read from Gatehouse with the secret key.
  const user = await currentUser();
  return (
    <main>
      <h1>Protected</h1>
      <p>
        User: <code id="user-id">{userId}</code>
      </p>
      <p>
        Email: <span id="email">{user?.email}</span>
      </p>
      <p>
        Organization: <code id="org-id">{orgId ?? 'none'}</code>
      </p>
      <form action={saveNote}>
        <label>
          Note <input name="note" />
        </label>{' '}
        <button type="submit">Save note</button>
      </form>
      <p>
        Saved note: <span id="note">{notes.get(userId) ?? '(none)'}</span>
      </p>
    </main>
  );
}
