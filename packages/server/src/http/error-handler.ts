import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.js';

/** The longest path parameter the router matches; every id, key and digest is far shorter. */
export const MAX_PARAM_LENGTH = 100;

export interface ValidationIssue {
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

/** The 400 of a failed validation, naming the fields; `where` is "request body", "query string" or the like. */
export function validationError(issues: readonly ValidationIssue[], where: string): ApiError {
  const fields = [...new Set(issues.map(fieldOf).filter(Boolean))];
  return new ApiError('invalid_request', describe(issues[0]!, where), { fields });
}

/** The route's own body limit (the import's 16 MiB), else the server's 1 MiB. */
function bodyLimitText(request: FastifyRequest | undefined): string {
  const bytes = request?.routeOptions.bodyLimit ?? 1024 * 1024;
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

function toApiError(error: FastifyError, request?: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const where =
      error.validationContext === 'querystring' ? 'query string' : error.validationContext === 'params' ? 'path' : 'request body';
    return validationError(error.validation as ValidationIssue[], where);
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
        `The request body is larger than this endpoint accepts (${bodyLimitText(request)}). Send a smaller body.`,
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

/**
 * Serialized here, not by the route's response schema: a route that documents its own body for a
 * status (health's 503) would otherwise fail to serialize an error of that status into a 500.
 */
function sendError(reply: FastifyReply, apiError: ApiError): FastifyReply {
  return reply.code(apiError.statusCode).type('application/json; charset=utf-8').send(JSON.stringify(apiError.toBody()));
}

/**
 * Errors the router raises before any hook runs (Fastify's `frameworkErrors`): a path that is not
 * valid percent-encoding, or a path segment too long to be anything this API names.
 */
export function answerFrameworkError(headers: Readonly<Record<string, string>>) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    let apiError: ApiError;
    if (error.code === 'FST_ERR_BAD_URL') {
      apiError = new ApiError(
        'invalid_request',
        'The URL path is not valid percent-encoding. Encode each reserved or non-ASCII character as %XX escapes of its UTF-8 bytes.',
      );
    } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      apiError = new ApiError(
        'uri_too_long',
        `A path segment of this URL is longer than ${MAX_PARAM_LENGTH} characters, and no id or key of this API is that long. Check the URL.`,
      );
    } else {
      apiError = toApiError(error);
      if (apiError.statusCode >= 500) request.log.error({ err: error }, 'unhandled framework error');
    }
    void reply.headers(headers).header('x-request-id', request.id);
    sendError(reply, apiError);
  };
}

/** What node's parser (llhttp) found wrong, in words, for the message. */
const MALFORMED_PART: Record<string, string> = {
  HPE_INVALID_METHOD: 'the method',
  HPE_INVALID_URL: 'the request target',
  HPE_INVALID_VERSION: 'the HTTP version',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value',
  HPE_INVALID_TOKEN: 'a header name',
  HPE_LF_EXPECTED: 'a line ending',
  HPE_CR_EXPECTED: 'a line ending',
  HPE_INVALID_CONTENT_LENGTH: 'the Content-Length header',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'the Content-Length header (sent with chunked Transfer-Encoding)',
  HPE_INVALID_TRANSFER_ENCODING: 'the Transfer-Encoding header',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size of the body',
};

function clientErrorOf(error: ConnectionError): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        'request_timeout',
        'The request did not arrive in time. Send the request line, headers and body without pausing.',
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'headers_too_large',
        'The request line and headers together exceed 16 KiB. Shorten the query string or the headers (a long filter belongs in fewer, shorter parameters).',
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('payload_too_large', 'The chunk extensions of the body are too large. Send the body without chunk extensions.');
  }
  const part = MALFORMED_PART[error.code];
  return new ApiError(
    'invalid_request',
    `The request is not valid HTTP/1.1${part ? `: ${part} is malformed` : ''}. Check the request line, the header names and values, and the framing of the body.`,
  );
}

/** An answer written straight to the socket, for requests that never become a Fastify request. */
function writeRaw(socket: Socket, apiError: ApiError, headers: Readonly<Record<string, string>>): void {
  const body = JSON.stringify(apiError.toBody());
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n` +
      `${lines.join('')}\r\n${body}`,
  );
}

/**
 * Requests node's HTTP parser refuses never reach Fastify; they are answered here on the raw socket
 * (Fastify's `clientErrorHandler`), in the same shape and with the same headers as any other answer.
 */
export function answerClientError(headers: Readonly<Record<string, string>>) {
  return (error: ConnectionError, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // Like node's own handler: never write into a response that has already begun.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) writeRaw(socket, clientErrorOf(error), headers);
    socket.destroySoon();
  };
}

/**
 * Three requests node answers by itself, with an empty body, unless told otherwise: an HTTP/1.1
 * request without Host (refused in the hook below instead, in the API's shape), an `Expect` other
 * than 100-continue (ignored, as RFC 9110 allows, so the request is served), and CONNECT (which
 * would just be hung up on: this is not a proxy).
 */
function answerWhatNodeWouldRefuse(app: FastifyInstance, headers: Readonly<Record<string, string>>): void {
  const server = app.server;
  (server as { requireHostHeader?: boolean }).requireHostHeader = false;
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
  server.on('connect', (_request, socket: Socket) =>
    writeRaw(
      socket,
      new ApiError('invalid_request', 'This server is not a proxy and does not accept CONNECT. Send API requests directly.'),
      headers,
    ),
  );
}

/**
 * Refusals every request is checked for before anything else: a missing Host, and a server that
 * is closing. Requests that still arrive while it closes (on kept-alive connections, or before the
 * listener stops) are 503 in the error shape, so a load balancer retries them elsewhere; this
 * replaces Fastify's `return503OnClosing`, whose body is not the API's.
 */
function refuseEarly(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      void reply.header('connection', 'close');
      return done(
        new ApiError(
          'unavailable',
          'This server is shutting down. Send the request again in a moment; behind a load balancer another node answers it.',
        ),
      );
    }
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return done(new ApiError('invalid_request', 'An HTTP/1.1 request must carry a Host header. Send "Host: <the server\'s host name>".'));
    }
    done();
  });
}

export function installErrorHandling(app: FastifyInstance, headers: Readonly<Record<string, string>> = {}): void {
  refuseEarly(app);
  answerWhatNodeWouldRefuse(app, headers);

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error, request);
    if (apiError.statusCode >= 500) request.log.error({ err: error }, 'unhandled error');
    if (apiError.headers) void reply.headers(apiError.headers);
    return sendError(reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError(
      'not_found',
      `No route ${request.method} ${request.url.split('?')[0]}. See /v1/openapi.json for the routes this service has.`,
    );
    return sendError(reply, error);
  });
}
