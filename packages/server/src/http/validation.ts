import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: false, ...options });
  addFormats.default(ajv);
  return ajv;
}

// Bodies are validated exactly as sent: a wrong type or an unknown field is a 400, never coerced
// or silently dropped. Query strings and path parameters arrive as text, so those are coerced.
const bodyAjv = makeAjv({ coerceTypes: false, removeAdditional: false });
const textAjv = makeAjv({ coerceTypes: true, removeAdditional: false });

/**
 * Compiled on a route's first request, not at start: compiling every route's schemas up front was
 * the largest part of starting the server (about 150 ms of 1 s). Fastify reads `errors` off the
 * function it was given, so the wrapper carries the compiled validator's.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
    const valid = compiled(data);
    validate.errors = compiled.errors ?? null;
    return valid;
  };
  validate.errors = null as ErrorObject[] | null;
  return validate;
};

/** The same for a response serializer: built when its route first answers with that status. */
export function lazily<A extends unknown[], R>(build: () => (...args: A) => R): (...args: A) => R {
  let built: ((...args: A) => R) | undefined;
  return (...args) => (built ??= build())(...args);
}

/** A body validator for data a route checks itself (the rows of a bulk import), with the body rules above. */
export function bodyValidator(schema: object): ValidateFunction {
  return bodyAjv.compile(schema);
}
