import { Ajv, type Options } from 'ajv';
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

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
