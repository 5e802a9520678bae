import { useState } from 'react';
import type { CreatedWebhookEndpoint, PlatformEnvironment, WebhookDeliveryPage, WebhookEndpoint, WebhookEndpointList, WebhookSecret } from '@gatehouse/contract';
import { formatTime, type Api } from '../api.js';
import { href } from '../router.js';
import { ConfirmButton, Copyable, ErrorMessage, Loading, Section, Table, useAction, useLoad } from '../ui.js';

export function WebhooksTab(props: { api: Api; environment: PlatformEnvironment; endpointId: string | undefined; projectId: string }) {
  return props.endpointId ? <EndpointDetail {...props} endpointId={props.endpointId} /> : <Endpoints {...props} />;
}

function Endpoints({ api, environment, projectId }: { api: Api; environment: PlatformEnvironment; projectId: string }) {
  const base = `/v1/platform/environments/${environment.id}/webhook-endpoints`;
  const endpoints = useLoad(() => api<WebhookEndpointList>('GET', base), [base]);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<CreatedWebhookEndpoint | null>(null);
  const create = useAction();
  return (
    <>
      <Section title="Add an endpoint">
        <form
          className="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run(async () => {
              const eventTypes = events.split(',').map((t) => t.trim()).filter(Boolean);
              setCreated(await api<CreatedWebhookEndpoint>('POST', base, { url, ...(eventTypes.length ? { eventTypes } : {}), ...(description ? { description } : {}) }));
              setUrl('');
              setEvents('');
              setDescription('');
              endpoints.reload();
            });
          }}
        >
          <label>
            URL
            <input type="url" required value={url} placeholder="https://api.example.com/webhooks/gatehouse" onChange={(e) => setUrl(e.target.value)} />
          </label>
          <label>
            Event types (comma-separated; empty: every event)
            <input value={events} placeholder="user.created, session.revoked" onChange={(e) => setEvents(e.target.value)} />
          </label>
          <label>
            Description
            <input value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={create.pending}>
            Add endpoint
          </button>
        </form>
        <ErrorMessage error={create.error} />
        {created && (
          <div className="callout" role="status">
            <p>Endpoint added. Its signing secret is shown only now:</p>
            <Copyable label="Webhook signing secret" value={created.secret} />
          </div>
        )}
      </Section>
      <Section title="Endpoints">
        <ErrorMessage error={endpoints.error} />
        {!endpoints.data && !endpoints.error && <Loading what="endpoints" />}
        {endpoints.data && (
          <Table headings={['URL', 'Events', 'Status', 'Failure rate']} empty={endpoints.data.data.length === 0 && 'No endpoint yet.'}>
            {endpoints.data.data.map((w) => (
              <tr key={w.id}>
                <td>
                  <a href={href('projects', projectId, environment.type, 'webhooks', w.id)}>{w.url}</a>
                </td>
                <td>{w.eventTypes?.join(', ') ?? 'All events'}</td>
                <td>{w.enabled ? 'Enabled' : `Disabled${w.disabledReason ? `: ${w.disabledReason}` : ''}`}</td>
                <td>{w.health.failureRate === null ? '—' : `${Math.round(w.health.failureRate * 100)}%`}</td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}

function EndpointDetail({ api, environment, endpointId, projectId }: { api: Api; environment: PlatformEnvironment; endpointId: string; projectId: string }) {
  const base = `/v1/platform/environments/${environment.id}/webhook-endpoints/${encodeURIComponent(endpointId)}`;
  const endpoint = useLoad(() => api<WebhookEndpoint>('GET', base), [base]);
  const deliveries = useLoad(() => api<WebhookDeliveryPage>('GET', `${base}/deliveries?limit=50`), [base]);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  if (endpoint.error) return <ErrorMessage error={endpoint.error} />;
  if (!endpoint.data) return <Loading what="the endpoint" />;
  const w = endpoint.data;
  const list = href('projects', projectId, environment.type, 'webhooks');
  return (
    <>
      <p className="breadcrumbs">
        <a href={list}>Webhooks</a> / {w.url}
      </p>
      <Section title={w.url}>
        <p className="muted">{w.description ?? 'No description.'} Events: {w.eventTypes?.join(', ') ?? 'all'}.</p>
        <ErrorMessage error={action.error} />
        {secret && (
          <div className="callout" role="status">
            <p>New signing secret (the previous one keeps signing alongside it for 24 hours):</p>
            <Copyable label="Webhook signing secret" value={secret} />
          </div>
        )}
        <div className="row wrap">
          <button
            type="button"
            disabled={action.pending}
            onClick={() => void action.run(async () => endpoint.setData(await api<WebhookEndpoint>('PATCH', base, { enabled: !w.enabled })))}
          >
            {w.enabled ? 'Disable' : 'Enable'}
          </button>
          <ConfirmButton
            label="Rotate secret"
            className="secondary"
            title="Rotate the signing secret"
            message={<p>A new secret signs from now on; the current one keeps signing alongside it for 24 hours.</p>}
            onConfirm={async () => setSecret((await api<WebhookSecret>('POST', `${base}/rotate-secret`)).secret)}
          />
          <ConfirmButton
            label="Delete endpoint"
            title="Delete the endpoint"
            message={<p>No more events are sent to {w.url}, and its delivery log is deleted.</p>}
            onConfirm={async () => {
              await api('DELETE', base);
              location.hash = list;
            }}
          />
        </div>
      </Section>
      <Section title="Deliveries" actions={<button type="button" onClick={deliveries.reload}>Refresh</button>}>
        <ErrorMessage error={deliveries.error} />
        {deliveries.data && (
          <Table
            headings={['Event', 'Attempt', 'Status', 'When']}
            actions
            empty={deliveries.data.data.length === 0 && 'Nothing delivered yet.'}
          >
            {deliveries.data.data.map((d) => (
              <tr key={d.id}>
                <td>
                  {d.eventType} <span className="muted">{d.messageId}</span>
                </td>
                <td>{d.attempt}</td>
                <td>
                  {d.status}
                  {d.responseStatus !== null && ` (${d.responseStatus})`}
                  {d.error && <span className="error"> {d.error}</span>}
                </td>
                <td>{formatTime(d.createdAt)}</td>
                <td>
                  {d.status === 'failed' && (
                    <button
                      type="button"
                      onClick={() =>
                        void action.run(async () => {
                          await api('POST', `${base}/deliveries/${encodeURIComponent(d.id)}/retry`);
                          deliveries.reload();
                        })
                      }
                    >
                      Replay
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
