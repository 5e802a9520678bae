import { describe, expect, it } from 'vitest';
import { ChangeFeed, type Change } from '../../src/db/changes.js';

const revoked: Change = { kind: 'session', environmentId: 'env_1', sessionId: 'sess_1' };
const renamed: Change = { kind: 'user', environmentId: 'env_1', userId: 'user_1' };

describe('ChangeFeed', () => {
  it('tells every listener and the relay of every change even when a listener throws, then rethrows', () => {
    const feed = new ChangeFeed();
    const before: Change[] = [];
    const after: Change[] = [];
    const relayed: Change[] = [];
    feed.subscribe((change) => before.push(change));
    feed.subscribe(() => {
      throw new Error('listener broke');
    });
    feed.subscribe((change) => after.push(change));
    feed.relay((change) => relayed.push(change));

    expect(() => feed.publish(revoked, renamed)).toThrow(AggregateError);
    expect(before).toEqual([revoked, renamed]);
    expect(after).toEqual([revoked, renamed]);
    expect(relayed).toEqual([revoked, renamed]);
  });

  it('rethrows a single failure as it is', () => {
    const feed = new ChangeFeed();
    const heard: Change[] = [];
    feed.subscribe(() => {
      throw new Error('listener broke');
    });
    feed.subscribe((change) => heard.push(change));
    expect(() => feed.deliver(revoked)).toThrow('listener broke');
    expect(heard).toEqual([revoked]);
  });

  it('hands changes from other nodes to local listeners only', () => {
    const feed = new ChangeFeed();
    const heard: Change[] = [];
    const relayed: Change[] = [];
    feed.subscribe((change) => heard.push(change));
    feed.relay((change) => relayed.push(change));
    feed.deliver(revoked);
    expect(heard).toEqual([revoked]);
    expect(relayed).toEqual([]);
  });
});
