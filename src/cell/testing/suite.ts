/**
 * The setup the cell suites share: a backend opened before the first test and closed after
 * the last, hosts that die with each test (so no earlier host's sweeper steals a later
 * test's room), and room keys no other test uses. Call it inside `describe`.
 */
import { after, afterEach, before } from 'node:test';
import type { CellKey } from '../lease.js';
import { startHost, type TestBackend, type TestHost } from './harness.js';
import { room } from './routing.js';

export interface HostsPerTest {
  /** The suite's backend (open from the first test on). */
  readonly backend: () => TestBackend;
  /** Its connection for inspecting rows. */
  readonly db: () => TestBackend['inspect']['db'];
  /** Starts a host that is killed when the current test ends. */
  readonly start: (options?: Parameters<typeof startHost>[1]) => Promise<TestHost>;
  /** A room key of its own: `<prefix><n>-<time>`. */
  readonly freshRoom: () => CellKey;
}

export function hostsPerTest(
  openBackend: () => Promise<TestBackend>,
  roomPrefix: string,
): HostsPerTest {
  let opened: TestBackend | undefined;
  const hosts: TestHost[] = [];
  let roomSeq = 0;
  before(async () => {
    opened = await openBackend();
  });
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.kill();
  });
  after(async () => {
    await opened?.close();
  });
  const backend = () => {
    if (!opened) throw new Error('the backend opens before the first test');
    return opened;
  };
  return {
    backend,
    db: () => backend().inspect.db,
    start: async (options = {}) => {
      const h = await startHost(backend(), options);
      hosts.push(h);
      return h;
    },
    freshRoom: () => room(`${roomPrefix}${++roomSeq}-${Date.now().toString(36)}`),
  };
}
