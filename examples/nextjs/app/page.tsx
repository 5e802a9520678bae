import { auth } from '@gatehouse/nextjs/server';

export default async function Home() {
  const { userId } = await auth();
  return (
    <main>
      <h1>Gatehouse on Next.js</h1>
      <p>This page is public.</p>
      <p id="home-status">{userId ? `Signed in as ${userId}.` : 'Signed out.'}</p>
    </main>
  );
}
