import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { serverDir } from '../helpers/built-server.js';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/process.js';
import { dropPostgresSchema, testDb } from '../helpers/store.js';
import { startTestApp } from '../helpers/app.js';

/**
 * deploy/ cannot be run here (no Docker engine, no cluster): what can be checked is. The
 * Dockerfile's stages, user, entrypoint and copied paths; its entrypoint and health check run as
 * the container runs them; the compose file and the chart parse, and every variable they set is a
 * documented one, every probe path a route, every value a template reads defined.
 */
const root = path.resolve(serverDir, '../..');
const deploy = path.join(root, 'deploy');
const documented = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
const configSource = readFileSync(path.join(serverDir, 'src/config.ts'), 'utf8');
const isDocumented = (name: string) => documented.includes(`\`${name}\``);

function dockerfile() {
  const text = readFileSync(path.join(deploy, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const instructions = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    });
  const stages = instructions.filter((i) => i.keyword === 'FROM');
  const runtimeStart = instructions.lastIndexOf(stages.at(-1)!);
  return { instructions, stages, runtime: instructions.slice(runtimeStart) };
}

describe('deploy/Dockerfile', () => {
  it('builds in one stage and runs the built server only, as a non-root user, with a health check', () => {
    const { stages, runtime } = dockerfile();
    expect(stages.map((s) => s.args)).toEqual(['${NODE_IMAGE} AS build', '${NODE_IMAGE} AS runtime']);
    expect(runtime.filter((i) => i.keyword === 'USER').at(-1)?.args).toBe('node');
    expect(JSON.parse(runtime.find((i) => i.keyword === 'ENTRYPOINT')!.args)).toEqual(['node', 'packages/server/dist/main.js']);
    expect(runtime.some((i) => i.keyword === 'HEALTHCHECK')).toBe(true);
    // Only built output and production dependencies reach the image: no src/ or test/ is copied.
    const copies = runtime.filter((i) => i.keyword === 'COPY').map((i) => i.args.split(/\s+/));
    for (const [from, source] of copies) {
      expect(from).toBe('--from=build');
      expect(source).toMatch(/^\/src\//);
      expect(source).not.toMatch(/\/packages\/[^/]+\/(src|test)(\/|$)/);
      // What the build stage makes is what `npm install` makes here (the hosted pages' script is
      // @gatehouse/react's build, which a worktree may lack; the image's build always has it).
      if (source !== '/src/packages/react/dist-hosted')
        expect(existsSync(path.join(root, source!.slice('/src/'.length))), source).toBe(true);
    }
    for (const needed of ['packages/server/dist', 'packages/console/dist', 'packages/react/dist-hosted', 'node_modules']) {
      expect(
        copies.some(([, source]) => source === `/src/${needed}`),
        needed,
      ).toBe(true);
    }
  });

  describe(`its entrypoint, run as the container runs it (${testDb()})`, () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-container-'));
    const schema = `gh_container_${Date.now().toString(36)}`;
    let server: ServerProcess | undefined;
    afterAll(async () => {
      if (server) await stopServerProcess(server);
      rmSync(dataDir, { recursive: true, force: true });
      await dropPostgresSchema(schema);
    });

    it('starts from the environment alone, writes only to the data directory, and passes the image health check', async () => {
      const { runtime } = dockerfile();
      const env = Object.fromEntries(
        runtime
          .filter((i) => i.keyword === 'ENV')
          .flatMap((i) => i.args.split(/\s+/))
          .map((pair) => pair.split('=') as [string, string]),
      );
      expect(env).toMatchObject({ NODE_ENV: 'production', GATEHOUSE_DATA_DIR: '/data' });
      const tracked = () =>
        execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).toString();
      const before = tracked();
      const port = await freePort();
      server = await startServerProcess({
        ...env,
        // The container's /data and port, here.
        GATEHOUSE_DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ...(testDb() === 'postgres' ? { DATABASE_URL: process.env.DATABASE_URL!, DATABASE_SCHEMA: schema } : {}),
      });
      expect(server.exitCode, server.output).toBeNull();
      const healthcheck = runtime.find((i) => i.keyword === 'HEALTHCHECK')!.args;
      const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD') + 3).trim()) as string[];
      expect(command[0]).toBe('node');
      const probe = spawnSync(process.execPath, command.slice(1), {
        env: { PATH: process.env.PATH ?? '', PORT: String(port) },
        timeout: 10_000,
      });
      expect(probe.status, probe.stderr.toString()).toBe(0);
      expect(readdirSync(dataDir).length).toBeGreaterThan(0);
      // Nothing was written in the source tree (in the image it is read-only and root's).
      expect(tracked()).toBe(before);
      // The chart's migration Job runs this command.
      expect(existsSync(path.join(serverDir, 'dist/migrate.js'))).toBe(true);
    });
  });
});

describe('deploy/compose.yaml', () => {
  const compose = parse(readFileSync(path.join(deploy, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<
      string,
      { environment?: Record<string, string>; depends_on?: Record<string, unknown>; command?: string; image?: string }
    >;
  };

  it('runs two Gatehouse nodes behind one proxy, with PostgreSQL, Redis, an S3-compatible store and mail capture', () => {
    const services = compose.services;
    for (const name of ['gatehouse-a', 'gatehouse-b', 'proxy', 'postgres', 'redis', 'minio', 'mailpit'])
      expect(services[name], name).toBeDefined();
    expect(services.proxy!.command).toContain('--to gatehouse-a:4000 --to gatehouse-b:4000');
    for (const [name, service] of Object.entries(services)) {
      const dependencies = Array.isArray(service.depends_on) ? (service.depends_on as string[]) : Object.keys(service.depends_on ?? {});
      for (const dependency of dependencies) expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined();
    }
  });

  it('sets only documented variables, the same on both nodes', () => {
    const a = compose.services['gatehouse-a']!.environment!;
    expect(compose.services['gatehouse-b']!.environment).toEqual(a);
    for (const name of Object.keys(a)) {
      expect(isDocumented(name), `${name} is not in docs/configuration.md`).toBe(true);
      expect(configSource.includes(`'${name}'`), `${name} is not read by config.ts`).toBe(true);
    }
    expect(a.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
    expect(a.REDIS_URL).toBe('redis://redis:6379');
  });
});

describe('deploy/helm/gatehouse', () => {
  const chart = path.join(deploy, 'helm/gatehouse');
  const values = parse(readFileSync(path.join(chart, 'values.yaml'), 'utf8')) as Record<string, any>;
  const helpers = readFileSync(path.join(chart, 'templates/_helpers.tpl'), 'utf8');
  const templates = readdirSync(path.join(chart, 'templates'))
    .filter((f) => f.endsWith('.yaml'))
    .map((file) => ({ file, text: readFileSync(path.join(chart, 'templates', file), 'utf8') }));

  /** The template with its actions taken out: control lines dropped, expressions replaced by a scalar. */
  const skeleton = (text: string) =>
    text
      .split('\n')
      .filter(
        (line) =>
          !/^\s*\{\{-?\s*(?:(?:if|else|end|range|with|toYaml)\b|include "gatehouse\.(?:labels|selectorLabels)").*\}\}\s*$/.test(line),
      )
      .map((line) => line.replace(/\{\{-?.*?-?\}\}/g, 'x'))
      .join('\n');

  it('has a chart and values that parse', () => {
    const meta = parse(readFileSync(path.join(chart, 'Chart.yaml'), 'utf8')) as Record<string, string>;
    expect(meta).toMatchObject({ apiVersion: 'v2', name: 'gatehouse', type: 'application' });
    expect(values.replicaCount).toBeGreaterThanOrEqual(2);
  });

  it('renders a Deployment, Service, migration Job, PodDisruptionBudget, Secret and ConfigMaps, each valid YAML', () => {
    const kinds: string[] = [];
    for (const { file, text } of templates) {
      for (const document of parseAllDocuments(skeleton(text))) {
        expect(document.errors, `${file}: ${document.errors.join('; ')}`).toEqual([]);
        const manifest = document.toJSON() as { apiVersion?: string; kind?: string; metadata?: unknown } | null;
        if (!manifest) continue;
        expect(manifest.apiVersion, file).toBeTruthy();
        expect(manifest.metadata, file).toBeTruthy();
        kinds.push(manifest.kind!);
      }
    }
    expect(kinds.sort()).toEqual(['ConfigMap', 'ConfigMap', 'Deployment', 'Job', 'PodDisruptionBudget', 'Secret', 'Service']);
  });

  it('reads only values that exist, and includes only helpers that are defined', () => {
    for (const { file, text } of [...templates, { file: '_helpers.tpl', text: helpers }]) {
      for (const match of text.matchAll(/\.Values\.([A-Za-z0-9_.]+)/g)) {
        const found = match[1]!.split('.').reduce<any>((node, key) => (node === undefined ? undefined : node[key]), values);
        expect(found, `${file} reads .Values.${match[1]}`).not.toBeUndefined();
      }
      for (const match of text.matchAll(/include "([^"]+)"/g))
        expect(helpers, `${file} includes ${match[1]}`).toContain(`define "${match[1]}"`);
    }
  });

  it('sets only documented variables, and probes routes the server has', async () => {
    const names = [...Object.keys(values.config), ...Object.keys(values.secrets)];
    for (const { text } of templates) for (const match of text.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)) names.push(match[1]!);
    names.push(...[...readFileSync(path.join(chart, 'values.yaml'), 'utf8').matchAll(/# ([A-Z][A-Z0-9_]{3,}):/g)].map((m) => m[1]!));
    for (const name of new Set(names)) {
      expect(isDocumented(name), `${name} is not in docs/configuration.md`).toBe(true);
      expect(configSource.includes(`'${name}'`), `${name} is not read by config.ts`).toBe(true);
    }
    const deployment = parse(skeleton(templates.find((t) => t.file === 'deployment.yaml')!.text)) as any;
    const container = deployment.spec.template.spec.containers[0];
    const paths = [container.livenessProbe, container.readinessProbe, container.startupProbe].map((probe) => probe.httpGet.path);
    expect(paths).toEqual(['/v1/health', '/v1/ready', '/v1/health']);
    const t = await startTestApp();
    try {
      for (const probePath of new Set(paths)) expect((await t.call({ method: 'GET', url: probePath })).statusCode, probePath).toBe(200);
    } finally {
      await t.close();
    }
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    const job = parseAllDocuments(skeleton(templates.find((t) => t.file === 'migration-job.yaml')!.text))[0]!.toJSON() as any;
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'packages/server/dist/migrate.js']);
  });
});
