import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.js';

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function fieldOf(issue: ValidationIssue): string {
  const path = issue.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'required') return [path, issue.params.missingProperty].filter(Boolean).join('.');
  if (issue.keyword === 'additionalProperties') return [path, issue.params.additionalProperty].filter(Boolean).join('.');
  return path;
}

function describe(issue: ValidationIssue, where: string): string {
  const field = fieldOf(issue);
  switch (issue.keyword) {
    case 'required':
      return `The ${where} is missing the required field "${field}".`;
    case 'additionalProperties':
      return `The ${where} has an unknown field "${field}"; remove it (see /v1/openapi.json for the accepted fields).`;
    case 'type':
      return `Field "${field}" of the ${where} must be of type ${String(issue.params.type)}.`;
    default:
      return `Field "${field}" of the ${where} ${issue.message ?? 'is invalid'}.`;
  }
}

function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const where =
      error.validationContext === 'querystring' ? 'query string' : error.validationContext === 'params' ? 'path' : 'request body';
    const issues = error.validation as ValidationIssue[];
    const fields = [...new Set(issues.map(fieldOf).filter(Boolean))];
    return new ApiError('invalid_request', describe(issues[0]!, where), { fields });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'Send the body as JSON with "Content-Type: application/json".');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The Content-Length header does not match the body. Send the body with its real length.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        'payload_too_large',
        'The request body is larger than this endpoint accepts (1 MiB for JSON). Send a smaller body.',
      );
  }
  // Backstop for text PostgreSQL cannot store (NUL, invalid encodings): the input is at fault.
  const sqlState = (error as { code?: unknown }).code;
  if (sqlState === '22021' || sqlState === '22P05') {
    return new ApiError(
      'invalid_request',
      'A text field or parameter contains a character that cannot be stored (such as NUL). Remove it and send again.',
    );
  }
  if (error instanceof SyntaxError) {
    return new ApiError('invalid_request', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.');
  }
  const status = error.statusCode ?? 500;
  if (status === 404) return new ApiError('not_found', 'Not found.');
  if (status >= 400 && status < 500)
    return new ApiError('invalid_request', 'The request could not be processed; check its method, headers and body.');
  return new ApiError('internal', 'Something went wrong on our side. The error was logged; try again, and report it if it persists.');
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.statusCode >= 500) request.log.error({ err: error }, 'unhandled error');
    if (apiError.headers) void reply.headers(apiError.headers);
    return reply.code(apiError.statusCode).type('application/json').send(apiError.toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError(
      'not_found',
      `No route ${request.method} ${request.url.split('?')[0]}. See /v1/openapi.json for the routes this service has.`,
    );
    return reply.code(404).send(error.toBody());
  });
}
