import { useEffect, useState } from 'react';

/** The console routes with the URL's fragment (#/projects/…), so the server serves one page. */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function navigate(...parts: string[]): void {
  location.hash = href(...parts);
}
