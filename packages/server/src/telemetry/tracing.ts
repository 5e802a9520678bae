import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { OtelConfig } from '../config.js';
import { loggableUrl } from '../http/logging.js';
import { requireLazily } from '../lib/lazy.js';

export interface Tracing {
  /** Sends the spans still buffered, then stops (SIGTERM). */
  shutdown(): Promise<void>;
}

/**
 * Rewrites URL attributes (`url.*`, `http.*`: url.full, url.path, url.query, http.target…) as the log
 * writes URLs: credentials travel in query strings (logging.ts), and a trace must hold none either.
 */
function redacting(exporter: SpanExporter): SpanExporter {
  return {
    export(spans: ReadableSpan[], done) {
      for (const span of spans) {
        const attributes = span.attributes as Record<string, unknown>;
        for (const [key, value] of Object.entries(attributes)) {
          if (typeof value !== 'string' || !/^(url|http)\./.test(key)) continue;
          if (key === 'url.query') attributes[key] = loggableUrl(`?${value.replace(/^\?/, '')}`).slice(1);
          else if (value.includes('?')) attributes[key] = loggableUrl(value);
        }
      }
      exporter.export(spans, done);
    },
    shutdown: () => exporter.shutdown(),
    ...(exporter.forceFlush ? { forceFlush: () => exporter.forceFlush!() } : {}),
  };
}

/**
 * OpenTelemetry traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT): requests (@fastify/otel, on
 * every Fastify instance as it is created, beneath the HTTP server span), SQL (pg), Redis (ioredis)
 * and outgoing HTTP (webhooks through node:http, IdP calls through fetch/undici). Called before
 * anything requires pg or ioredis or creates the app. Every package is required here, only when
 * configured: an unset endpoint loads none of them (and the bundle, whose import() has no loader,
 * require()s them; see lib/lazy.ts).
 */
export function startTracing(config: OtelConfig): Tracing {
  const { NodeTracerProvider } = requireLazily('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } = requireLazily('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = requireLazily('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = requireLazily('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = requireLazily(
    '@opentelemetry/instrumentation-http',
  ) as typeof import('@opentelemetry/instrumentation-http');
  const { UndiciInstrumentation } = requireLazily(
    '@opentelemetry/instrumentation-undici',
  ) as typeof import('@opentelemetry/instrumentation-undici');
  const { PgInstrumentation } = requireLazily('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = requireLazily(
    '@opentelemetry/instrumentation-ioredis',
  ) as typeof import('@opentelemetry/instrumentation-ioredis');
  const { FastifyOtelInstrumentation } = requireLazily('@fastify/otel') as typeof import('@fastify/otel');
  const { OTLPTraceExporter } = (
    config.protocol === 'http/json'
      ? requireLazily('@opentelemetry/exporter-trace-otlp-http')
      : requireLazily('@opentelemetry/exporter-trace-otlp-proto')
  ) as typeof import('@opentelemetry/exporter-trace-otlp-http');

  const exporter = new OTLPTraceExporter({ url: `${config.endpoint}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor(redacting(exporter))],
  });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation(),
      new UndiciInstrumentation(),
      new PgInstrumentation(),
      // The command name only: keys and arguments can hold email keys and token hashes.
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
    ],
  });
  // node:http and node:https were loaded at start (the bundle requires them): requiring them again
  // hands them to the HTTP instrumentation, which wraps their functions in place.
  requireLazily('http');
  requireLazily('https');
  return { shutdown: () => provider.shutdown() };
}
