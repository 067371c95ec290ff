/**
 * `/metrics` of a real node (embedded SQLite and media server) after voice-room and meeting
 * activity through REST and `/ws`, as Prometheus scrapes it: every metric of the table in
 * docs/operations.md is served with a plausible value, every `rooms_*` metric served is in
 * that table, and the Grafana dashboard in ops/grafana reads only metrics the node serves.
 * Then a node that follows a separate media server reports that server's load.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from './config.js';
import {
  mediaSkipReason,
  opusRtpParameters,
  startTestMediaServer,
  TEST_TOKEN,
} from '../media-server/testing/harness.js';
import type { MediaServer } from '../media-server/server.js';
import { silentLogger } from '../cell/testing/harness.js';
import type { TestClient } from '../edge/ws/testing/ws-client.js';
import { startNode, type RoomsNode } from './node.js';
import { startMeetingNode, type MeetingNode } from './testing/meeting-node.js';
import { parsePrometheusText, promqlNames, type Scrape } from './testing/prometheus-text.js';

const root = new URL('../../', import.meta.url);

/** The metric names of the table in docs/operations.md ("| `rooms_…` | type | …"). */
async function documentedMetrics(): Promise<Map<string, string>> {
  const text = await readFile(new URL('docs/operations.md', root), 'utf8');
  const rows = [...text.matchAll(/^\| `(rooms_[a-z_]+)` +\| (gauge|counter|histogram) +\|/gm)];
  return new Map(rows.map((r) => [r[1]!, r[2]!]));
}

async function scrape(node: RoomsNode): Promise<Scrape> {
  const res = await fetch(`${node.httpAddress}/metrics`);
  assert.equal(res.status, 200);
  return parsePrometheusText(await res.text());
}

/** Polls until `check` holds (10 s at most): counters move with background work. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

const atLeast = (min: number) => (value: number, what: string) =>
  assert.ok(value >= min, `${what} = ${value}, expected ≥ ${min}`);
const exactly = (expected: number) => (value: number, what: string) =>
  assert.equal(value, expected, what);

describe('/metrics after voice-room and meeting activity', { skip: mediaSkipReason() }, () => {
  let started: MeetingNode | undefined;
  let node: RoomsNode;
  let metrics: Scrape;
  const framesSent = { count: 0 };

  before(async () => {
    // A short lease so that renewals happen within the test (every TTL/3).
    started = await startMeetingNode(['anna', 'bert'], {
      ROOMS_LEASE_TTL_MS: '900',
      ROOMS_MEDIA_SERVER_ID: 'media-e',
    });
    node = started.node;
    const { api } = started;
    const ok = (ack: { code: number; message?: string; data: unknown }) => {
      assert.equal(ack.code, 0, ack.message);
      framesSent.count++;
      return ack.data as Record<string, unknown>;
    };
    const post = async (who: string, path: string, body: object = {}) => {
      const res = await api.call('POST', path, { as: who, body });
      assert.ok(res.status < 300, `${path}: ${JSON.stringify(res.body)}`);
      return res.body.data as Record<string, unknown>;
    };

    // A voice room: anna on the mic producing audio, bert consuming it.
    const roomId = (await post('anna', '/voice/rooms', { title: '指标' })).room_id as string;
    await post('anna', `/voice/rooms/${roomId}/join`);
    await post('bert', `/voice/rooms/${roomId}/join`);
    await post('anna', `/voice/rooms/${roomId}/mic/up`, { seat_index: 0 });
    const joined = async (who: string) => {
      const socket: TestClient = await started!.socket(who);
      ok(await socket.request('room.subscribe', { room_id: roomId }));
      const media = ok(await socket.request('voice.media.join', { room_id: roomId }));
      return { socket, media };
    };
    const anna = await joined('anna');
    const bert = await joined('bert');
    const transport = async (socket: TestClient, direction: string) =>
      ok(await socket.request('voice.transport.create', { room_id: roomId, direction }))
        .id as string;
    const send = await transport(anna.socket, 'send');
    const producer = ok(
      await anna.socket.request('voice.produce.start', {
        room_id: roomId,
        transport_id: send,
        kind: 'audio',
        rtp_parameters: opusRtpParameters(),
      }),
    ).producer_id as string;
    const recv = await transport(bert.socket, 'recv');
    ok(
      await bert.socket.request('voice.consume.start', {
        room_id: roomId,
        transport_id: recv,
        producer_id: producer,
        rtp_capabilities: bert.media.rtp_capabilities,
      }),
    );

    // A meeting with two participants, one of them following it over /ws.
    const meeting = await post('anna', '/meeting/rooms', { title: '周会' });
    const code = (meeting.room as { room_code: string }).room_code;
    await post('bert', `/meeting/rooms/${code}/join`);
    ok(await bert.socket.request('meeting.room.join', { room_code: code }));

    // A socket that comes and goes (closed by its client).
    const passing = await started.socket('anna');
    passing.close();

    // Background work: lease renewals, the relay skipping events of an app with no webhook.
    await eventually('renewals, a skipped delivery and the closed socket', async () => {
      const m = await scrape(node);
      return (
        m.find('rooms_lease_renewals_total', { outcome: 'renewed' }).some((s) => s.value >= 1) &&
        m.find('rooms_outbox_deliveries_total', { outcome: 'no_sink' }).some((s) => s.value >= 1) &&
        m.find('rooms_ws_closed_total', { reason: 'client' }).some((s) => s.value >= 1)
      );
    });
    metrics = await scrape(node);
  });
  after(async () => {
    await started?.close();
  });

  const server = () => ({ server: 'media-e' });
  /** One check per documented metric: its samples exist and their values make sense. */
  const checks: Record<string, (m: Scrape) => void> = {
    rooms_cells_loaded: (m) => {
      atLeast(1)(m.value('rooms_cells_loaded', { kind: 'voice_room' }), 'voice rooms loaded');
      atLeast(1)(m.value('rooms_cells_loaded', { kind: 'meeting' }), 'meetings loaded');
    },
    rooms_cell_batch_size: (m) => {
      const { count, sum } = histogram(m, 'rooms_cell_batch_size');
      atLeast(6)(count, 'batches');
      atLeast(count)(sum, 'commands in batches');
    },
    rooms_cell_commit_seconds: (m) => {
      const { count, sum } = histogram(m, 'rooms_cell_commit_seconds');
      atLeast(6)(count, 'commits timed');
      assert.ok(sum > 0, 'commit time');
    },
    rooms_cell_commits_total: (m) => atLeast(6)(m.value('rooms_cell_commits_total'), 'commits'),
    rooms_cell_commands_total: (m) => {
      // Voice: create, 2 joins, mic up; meeting: create, join; and presence notices.
      atLeast(6)(m.value('rooms_cell_commands_total', { outcome: 'applied' }), 'applied');
      atLeast(0)(m.value('rooms_cell_commands_total', { outcome: 'noop' }), 'noop');
      atLeast(0)(m.value('rooms_cell_commands_total', { outcome: 'refused' }), 'refused');
    },
    rooms_cell_fenced_total: (m) => exactly(0)(m.value('rooms_cell_fenced_total'), 'fenced'),
    rooms_cell_lock_retries_total: (m) =>
      exactly(0)(m.value('rooms_cell_lock_retries_total'), 'lock retries (SQLite)'),
    rooms_cell_pipelined_batches_total: (m) => {
      for (const outcome of ['committed', 'decided_again']) {
        exactly(0)(m.value('rooms_cell_pipelined_batches_total', { outcome }), 'SQLite: none');
      }
    },
    rooms_cell_timers_fired_total: (m) =>
      atLeast(0)(m.value('rooms_cell_timers_fired_total'), 'timers'),
    rooms_lease_renewals_total: (m) => {
      atLeast(1)(m.value('rooms_lease_renewals_total', { outcome: 'renewed' }), 'renewed');
      assert.deepEqual(m.find('rooms_lease_renewals_total', { outcome: 'lost' }), []);
    },
    rooms_outbox_oldest_pending_age_seconds: (m) =>
      atLeast(0)(m.value('rooms_outbox_oldest_pending_age_seconds'), 'outbox lag'),
    rooms_outbox_deliveries_total: (m) =>
      atLeast(1)(m.value('rooms_outbox_deliveries_total', { outcome: 'no_sink' }), 'skipped'),
    rooms_outbox_delivery_attempts: (m) => histogram(m, 'rooms_outbox_delivery_attempts'),
    rooms_outbox_delivery_seconds: (m) => histogram(m, 'rooms_outbox_delivery_seconds'),
    rooms_realtime_published_total: (m) =>
      atLeast(1)(m.value('rooms_realtime_published_total', { channel: 'room' }), 'published'),
    rooms_realtime_publish_errors_total: (m) =>
      exactly(0)(m.value('rooms_realtime_publish_errors_total'), 'publish errors'),
    rooms_ws_connections: (m) => exactly(2)(m.value('rooms_ws_connections'), 'open sockets'),
    rooms_ws_followed_rooms: (m) =>
      atLeast(2)(m.value('rooms_ws_followed_rooms'), 'followed: the voice room and the meeting'),
    rooms_ws_frames_received_total: (m) =>
      atLeast(framesSent.count)(m.value('rooms_ws_frames_received_total'), 'frames in'),
    rooms_ws_frames_sent_total: (m) =>
      // Each request got its ACK, and room frames went out besides.
      atLeast(framesSent.count + 1)(m.value('rooms_ws_frames_sent_total'), 'frames out'),
    rooms_ws_closed_total: (m) =>
      atLeast(1)(m.value('rooms_ws_closed_total', { reason: 'client' }), 'closed by client'),
    rooms_media_up: (m) => exactly(1)(m.value('rooms_media_up', server()), 'media up'),
    rooms_media_workers: (m) => exactly(1)(m.value('rooms_media_workers', server()), 'workers'),
    rooms_media_workers_alive: (m) =>
      exactly(1)(m.value('rooms_media_workers_alive', server()), 'workers alive'),
    // The voice room's router and the meeting's.
    rooms_media_routers: (m) => atLeast(2)(m.value('rooms_media_routers', server()), 'routers'),
    rooms_media_transports: (m) =>
      atLeast(2)(m.value('rooms_media_transports', server()), 'transports'),
    rooms_media_producers: (m) =>
      exactly(1)(m.value('rooms_media_producers', server()), 'producers'),
    rooms_media_consumers: (m) =>
      exactly(1)(m.value('rooms_media_consumers', server()), 'consumers'),
  };

  it('serves every metric of docs/operations.md with a plausible value', async () => {
    const documented = await documentedMetrics();
    assert.deepEqual([...documented.keys()].sort(), Object.keys(checks).sort());
    for (const [name, type] of documented) {
      assert.equal(metrics.types.get(name), type, `${name} is a ${type}`);
      checks[name]!(metrics);
    }
    // The media numbers are the server's own.
    const stats = node.media.server!.registry.stats;
    assert.equal(metrics.value('rooms_media_routers', server()), stats.routers);
    assert.equal(metrics.value('rooms_media_transports', server()), stats.transports);
  });

  it('documents every rooms_* metric it serves', async () => {
    const documented = await documentedMetrics();
    const served = [...metrics.types.keys()].filter((name) => name.startsWith('rooms_'));
    assert.deepEqual(
      served.filter((name) => !documented.has(name)),
      [],
    );
  });

  it('has a Grafana dashboard whose every expression reads only metrics the node serves', async () => {
    const dashboard = JSON.parse(
      await readFile(new URL('ops/grafana/echochat-rooms.json', root), 'utf8'),
    ) as Dashboard;
    const sampleNames = new Set(metrics.samples.map((s) => s.name));
    const labelsOf = (name: string) =>
      new Set(metrics.find(name).flatMap((s) => Object.keys(s.labels)));
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    const read = new Set<string>();
    for (const panel of panels) {
      assert.ok(panel.targets && panel.targets.length > 0, `${panel.title}: has queries`);
      assert.equal(panel.datasource?.uid, '${datasource}', `${panel.title}: the chosen source`);
      for (const target of panel.targets) {
        const { metrics: names, groupLabels } = promqlNames(target.expr);
        assert.ok(names.length > 0, `${panel.title}: ${target.expr} reads a metric`);
        for (const name of names) {
          assert.ok(sampleNames.has(name), `${panel.title}: ${name} is not served`);
          read.add(name.replace(/_(bucket|sum|count)$/, ''));
        }
        // Grouping by a label the metrics do not have would silently merge every series.
        for (const label of groupLabels) {
          if (label === 'instance' || label === 'le') continue;
          assert.ok(
            names.some((name) => labelsOf(name).has(label)),
            `${panel.title}: no metric of ${target.expr} has a label ${label}`,
          );
        }
      }
    }
    // What the dashboard is for: throughput, latency, fences, outbox lag, sockets, media.
    for (const needed of [
      'rooms_cell_commands_total',
      'rooms_cell_commit_seconds',
      'rooms_cell_batch_size',
      'rooms_cell_fenced_total',
      'rooms_lease_renewals_total',
      'rooms_cells_loaded',
      'rooms_outbox_oldest_pending_age_seconds',
      'rooms_ws_connections',
      'rooms_ws_frames_received_total',
      'rooms_ws_frames_sent_total',
      'rooms_media_workers_alive',
      'rooms_media_routers',
      'rooms_media_consumers',
    ]) {
      assert.ok(read.has(needed), `the dashboard shows ${needed}`);
    }
    const p99 = panels.flatMap((p) => p.targets!.map((t) => t.expr));
    assert.ok(
      p99.some((e) => /histogram_quantile\(0\.99,.*rooms_cell_commit_seconds_bucket/.test(e)),
      'a p99 of the commit latency',
    );
  });
});

describe('media metrics of a separate media server', { skip: mediaSkipReason() }, () => {
  let media: MediaServer;
  let node: RoomsNode;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-metrics-'));
    media = await startTestMediaServer({ workers: 1 });
    node = await startNode(
      loadConfig({
        ROOMS_DB_URL: join(dir, 'rooms.sqlite'),
        ROOMS_HTTP_HOST: '127.0.0.1',
        ROOMS_HTTP_PORT: '0',
        ROOMS_GRPC_PORT: '0',
        ROOMS_MEDIA_EMBEDDED: 'false',
        ROOMS_MEDIA_URL: media.url,
        ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
        ROOMS_MEDIA_SERVER_ID: 'media-a',
        ROOMS_JWT_SECRET: 'metrics-test-secret-0123456789abcdefgh',
        ROOMS_LOG_LEVEL: 'silent',
      }),
      silentLogger,
    );
  });
  after(async () => {
    await node?.close();
    await media?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("reports the server's workers and resources from its /internal/info", async () => {
    await media.registry.ensureRouter('metrics-room');
    const m = await scrape(node);
    const server = { server: 'media-a' };
    assert.equal(m.value('rooms_media_up', server), 1);
    assert.equal(m.value('rooms_media_workers', server), 1);
    assert.equal(m.value('rooms_media_workers_alive', server), 1);
    assert.equal(m.value('rooms_media_routers', server), media.registry.stats.routers);
    assert.ok(m.value('rooms_media_routers', server) >= 1);
  });
});

interface Dashboard {
  panels: {
    id: number;
    type: string;
    title: string;
    datasource?: { uid?: string };
    targets?: { expr: string }[];
  }[];
}

/** A histogram's count and sum; its `+Inf` bucket must hold every observation. */
function histogram(m: Scrape, name: string): { count: number; sum: number } {
  const count = m.value(`${name}_count`);
  const sum = m.value(`${name}_sum`);
  assert.equal(m.value(`${name}_bucket`, { le: '+Inf' }), count, `${name}: +Inf = count`);
  return { count, sum };
}
