import type { ReactNode } from 'react';
import { GatehouseProvider, SignedIn, SignedOut } from '@gatehouse/nextjs';
import { SignOutButton } from './sign-out-button';

// Rendered per request: the keys are read at run time, and pages depend on who is signed in.
export const dynamic = 'force-dynamic';

export const metadata = { title: 'Gatehouse on Next.js' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: 'system-ui, sans-serif', margin: 24 }}>
        <GatehouseProvider>
          <nav style={{ display: 'flex', gap: 16, marginBottom: 24 }}>
            <a href="/">Home</a>
            <a href="/protected">Protected</a>
            <SignedOut>
              <a href="/sign-in">Sign in</a>
            </SignedOut>
            <SignedIn>
              <SignOutButton />
            </SignedIn>
          </nav>
          {children}
        </GatehouseProvider>
      </body>
    </html>
  );
}
