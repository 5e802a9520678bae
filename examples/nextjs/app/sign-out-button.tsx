'use client';
import { useAuth } from '@gatehouse/nextjs';

export function SignOutButton() {
  const { signOut } = useAuth();
  // Clears the session cookie; the provider then renders the server components again.
  return (
    <button type="button" onClick={() => void signOut()}>
      Sign out
    </button>
  );
}
