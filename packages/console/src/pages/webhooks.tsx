import { useState } from 'react';
import type { CreatedWebhookEndpoint, PlatformEnvironment, WebhookEventType } from '@gatehouse/contract';
import { formatTime } from '../api.js';
import { PageControls, usePages } from '../paging.js';
import type { Platform } from '../platform.js';
import { href } from '../router.js';
import { ConfirmButton, Copyable, ErrorMessage, Loaded, Pending, Section, Table, useAction, useLoad } from '../ui.js';

export function WebhooksTab(props: { platform: Platform; environment: PlatformEnvironment; endpointId: string | undefined; projectId: string }) {
  return props.endpointId ? <EndpointDetail {...props} endpointId={props.endpointId} /> : <Endpoints {...props} />;
}

function Endpoints({ platform, environment, projectId }: { platform: Platform; environment: PlatformEnvironment; projectId: string }) {
  const endpoints = useLoad(() => platform.webhooks.list(environment.id), [environment.id]);
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
              // As typed: the server refuses an unknown event type with a message naming it.
              const eventTypes = events.split(',').map((t) => t.trim()).filter(Boolean) as WebhookEventType[];
              setCreated(await platform.webhooks.create(environment.id, { url, ...(eventTypes.length ? { eventTypes } : {}), ...(description ? { description } : {}) }));
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
        <Loaded state={endpoints} what="endpoints">
          {(list) => (
            <Table headings={['URL', 'Events', 'Status', 'Failure rate']} empty={list.data.length === 0 && 'No endpoint yet.'}>
              {list.data.map((w) => (
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
        </Loaded>
      </Section>
    </>
  );
}

function EndpointDetail(props: { platform: Platform; environment: PlatformEnvironment; endpointId: string; projectId: string }) {
  const { environment, endpointId, projectId } = props;
  const webhooks = props.platform.webhooks;
  const endpoint = useLoad(() => webhooks.get(environment.id, endpointId), [environment.id, endpointId]);
  const deliveries = usePages((cursor) => webhooks.deliveries(environment.id, endpointId, { limit: 50, cursor }), [environment.id, endpointId]);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  if (!endpoint.data) return <Pending state={endpoint} what="the endpoint" />;
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
            onClick={() => void action.run(async () => endpoint.setData(await webhooks.setEnabled(environment.id, endpointId, !w.enabled)))}
          >
            {w.enabled ? 'Disable' : 'Enable'}
          </button>
          <ConfirmButton
            label="Rotate secret"
            className="secondary"
            title="Rotate the signing secret"
            message={<p>A new secret signs from now on; the current one keeps signing alongside it for 24 hours.</p>}
            onConfirm={async () => setSecret((await webhooks.rotateSecret(environment.id, endpointId)).secret)}
          />
          <ConfirmButton
            label="Delete endpoint"
            title="Delete the endpoint"
            message={<p>No more events are sent to {w.url}, and its delivery log is deleted.</p>}
            onConfirm={async () => {
              await webhooks.remove(environment.id, endpointId);
              location.hash = list;
            }}
          />
        </div>
      </Section>
      <Section title="Deliveries" actions={<button type="button" onClick={deliveries.reload}>Refresh</button>}>
        <Loaded state={deliveries} what="deliveries">
          {(page) => (
            <Table
              headings={['Event', 'Attempt', 'Status', 'When']}
              actions
              empty={page.data.length === 0 && 'Nothing delivered yet.'}
            >
              {page.data.map((d) => (
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
                            await webhooks.retry(environment.id, endpointId, d.id);
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
        </Loaded>
        <PageControls pages={deliveries} previous="Newer" next="Older" />
      </Section>
    </>
  );
}
