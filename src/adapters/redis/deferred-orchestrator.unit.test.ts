/**
 * A remote media server's orchestrator, found when a call is made, forwards every call: a
 * pause (禁麦, a meeting's held audio) reaches the server like a creation does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MediaOrchestrator } from '../../media-cluster/media-orchestrator.js';
import { deferred } from './redis-media-servers.js';

describe('a deferred media orchestrator', () => {
  it('forwards pauses, resumes and closes to the server it resolves', async () => {
    const calls: string[] = [];
    const call =
      (name: string) =>
      (...args: unknown[]) => {
        calls.push(`${name}(${args.map(String).join(',')})`);
        return Promise.resolve(undefined);
      };
    // Any method, but no `then`: it is what a promise resolves to, not a thenable.
    const target = new Proxy({} as MediaOrchestrator, {
      get: (_t, name) => (name === 'then' ? undefined : call(String(name))),
    });
    const remote = deferred(
      () => Promise.resolve(target),
      () => target,
    );
    await remote.setProducerPaused('p-1', true);
    await remote.resumeConsumer('c-1');
    await remote.closeProducer('p-1');
    assert.deepEqual(calls, [
      'setProducerPaused(p-1,true)',
      'resumeConsumer(c-1)',
      'closeProducer(p-1)',
    ]);
  });
});
