import { Type, type Static, type TSchema } from 'typebox';
import { define } from './registry.js';

/** A page of a paginated listing: pass `nextCursor` back as `cursor` for the next one; null on the last. */
export function Page<T extends TSchema>(title: string, item: T) {
  return define(title, Type.Object({ data: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) }));
}

/** A whole (short, unpaginated) listing. */
export function List<T extends TSchema>(title: string, item: T) {
  return define(title, Type.Object({ data: Type.Array(item) }));
}

/** The answer of a deletion that names what it deleted. */
export const Deleted = define('Deleted', Type.Object({ id: Type.String(), deleted: Type.Literal(true) }));
export type Deleted = Static<typeof Deleted>;
