import { Type } from 'typebox';

/** Shared pieces of route schemas. */
export const PaginationQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const ErrorResponse = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Unknown()),
  }),
});

export function page<T extends ReturnType<typeof Type.Object>>(item: T) {
  return Type.Object({ data: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });
}

/** Path ids are looked up, not pattern-checked: a malformed id is simply not found (404). */
export function IdParams<K extends string>(...names: K[]) {
  return Type.Object(
    Object.fromEntries(names.map((name) => [name, Type.String({ minLength: 1, maxLength: 128 })])) as Record<
      K,
      ReturnType<typeof Type.String>
    >,
    { additionalProperties: false },
  );
}
