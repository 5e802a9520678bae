'use client';
import { Suspense } from 'react';
import { useSearchParams } from 'next/navigation';
import { SignIn } from '@gatehouse/nextjs';

function SignInPage() {
  const back = useSearchParams().get('redirect_url');
  // Only a path on this site: redirect_url comes from the address bar.
  const next = back && back.startsWith('/') && !back.startsWith('//') && !back.includes('\\') ? back : '/protected';
  return <SignIn afterSignInUrl={next} />;
}

export default function Page() {
  return (
    <main>
      <Suspense>
        <SignInPage />
      </Suspense>
    </main>
  );
}
