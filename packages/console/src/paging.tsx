import { useState } from 'react';
import type { Paged } from './platform.js';
import { useLoad } from './ui.js';

/**
 * A cursor-paged listing, a page at a time: `load(cursor)` fetches one (no cursor: the first). The
 * cursors walked are kept, so Previous steps back; other `deps` (another search, another environment)
 * start again at the first page, and so does `restart`.
 */
export function usePages<T>(load: (cursor: string | undefined) => Promise<Paged<T>>, deps: unknown[]) {
  const key = JSON.stringify(deps);
  const [walk, setWalk] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  const cursors = walk.key === key ? walk.cursors : [];
  const cursor = cursors.at(-1);
  const page = useLoad(() => load(cursor), [...deps, cursor]);
  const next = page.data?.nextCursor;
  return {
    ...page,
    previous: cursors.length > 0 ? () => setWalk({ key, cursors: cursors.slice(0, -1) }) : undefined,
    next: next ? () => setWalk({ key, cursors: [...cursors, next] }) : undefined,
    restart: () => setWalk({ key, cursors: [] }),
  };
}

/** The Previous / Next buttons of a paged listing (a listing may name them otherwise: Newer / Older). */
export function PageControls(props: {
  pages: { previous?: (() => void) | undefined; next?: (() => void) | undefined };
  previous?: string;
  next?: string;
}) {
  const { pages, previous = 'Previous', next = 'Next' } = props;
  return (
    <div className="row">
      {pages.previous && (
        <button type="button" onClick={pages.previous}>
          {previous}
        </button>
      )}
      {pages.next && (
        <button type="button" onClick={pages.next}>
          {next}
        </button>
      )}
    </div>
  );
}
