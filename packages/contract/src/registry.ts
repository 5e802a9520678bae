import type { TSchema } from 'typebox';

/**
 * Every shape the API answers with is defined once, here, under its title. The server's route
 * schemas use these objects, the OpenAPI document carries the titles, and a server test checks
 * that every success response in that document is one of them, unchanged.
 */
const shapes = new Map<string, TSchema>();

/** Names `schema` (its JSON Schema `title`) and registers it as a shape of the contract. */
export function define<T extends TSchema>(title: string, schema: T): T {
  if (shapes.has(title)) throw new Error(`The contract defines "${title}" twice.`);
  const named = Object.assign(schema, { title });
  shapes.set(title, named);
  return named;
}

/** The contract's shapes by title. */
export function contractShapes(): ReadonlyMap<string, TSchema> {
  return shapes;
}
