/**
 * The figures the benches are held to, declared once: `bench/REPORT.md` shows each with this
 * run's value and whether it met its goal. Goals are the project's stated targets; a figure
 * a run did not measure (a bench skipped or failed) reads "not measured", never "met".
 */

/** A bench's machine-readable lines, `name=value`, by name. */
export type Figures = Readonly<Record<string, number>>;

/** The `name=value` lines of a bench's output (the last one of a name wins). */
export function parseFigures(output: readonly string[]): Figures {
  const figures: Record<string, number> = {};
  for (const line of output) {
    const match = /^([a-z][a-z0-9_]*)=(-?[0-9]+(?:\.[0-9]+)?|NaN)$/.exec(line.trim());
    if (match) figures[match[1]!] = Number(match[2]);
  }
  return figures;
}

interface Goal {
  readonly key: string;
  readonly label: string;
  /** How the goal reads in the report, e.g. `≥ 0.9`. */
  readonly goal: string;
  readonly met: (value: number) => boolean;
}

const atLeast = (key: string, label: string, min: number): Goal => ({
  key,
  label,
  goal: `≥ ${min}`,
  met: (v) => v >= min,
});
const atMost = (key: string, label: string, max: number, unit = ''): Goal => ({
  key,
  label,
  goal: `≤ ${max}${unit}`,
  met: (v) => v <= max,
});

/** Lease TTL of the failover bench (bench/failover.bench.ts): the goal is TTL + 1 s. */
const FAILOVER_TTL_MS = 2_000;

export const GOALS: readonly Goal[] = [
  atLeast('ratio_many_rooms', 'Storage path, 1,000 rooms: ours / raw', 0.95),
  atLeast('ratio_hot_room', 'Storage path, one hot room: ours / raw', 25),
  atLeast('ratio_forwarded', 'Half the calls forwarded / all direct', 0.9),
  atMost(
    'failover_kill9_gap_max_ms',
    'Rooms back after kill -9 of the owner (slowest)',
    FAILOVER_TTL_MS + 1000,
    ' ms',
  ),
  atMost(
    'failover_sigstop_gap_max_ms',
    'Rooms back after SIGSTOP of the owner (slowest)',
    FAILOVER_TTL_MS + 1000,
    ' ms',
  ),
  atMost('failover_drain_gap_max_ms', 'Rooms back after a drain (slowest)', 500, ' ms'),
  atMost(
    'fanout_p99_ms',
    'Fan-out to 2,000 sockets at 20 events/s, commit → client p99',
    100,
    ' ms',
  ),
  atLeast('fanout_frames_per_s', 'Fan-out to 2,000 sockets, highest sustained frames/s', 200_000),
  atLeast('ratio_fanout_vs_bare_ws', 'Fan-out: ours / a bare ws broadcast, sustained rate', 0.8),
  atMost('meeting_chat_p99_ms', 'Meeting chat, send → all 8 members p99', 100, ' ms'),
  atLeast(
    'voice_seat_p99_ratio_under_chat',
    'Voice room seats at 20/s: p99 quiet / with chat to 2,000 followers',
    0.8,
  ),
  atLeast('voice_gift_ratio_rankings', 'Voice room gifts/s: rankings on / off', 0.9),
  atMost('scale_meetings_100_rest_join_p99_ms', '100 meetings × 8: REST join p99', 50, ' ms'),
  atMost(
    'scale_meetings_100_transport_create_p99_ms',
    '100 meetings × 8: transport.create ACK p99',
    50,
    ' ms',
  ),
  atMost(
    'scale_meetings_100_produce_start_p99_ms',
    '100 meetings × 8: produce.start ACK p99',
    50,
    ' ms',
  ),
  atMost(
    'scale_meetings_100_consume_start_p99_ms',
    '100 meetings × 8: consume.start ACK p99',
    50,
    ' ms',
  ),
  atMost(
    'scale_meetings_100_chat_p99_ms',
    '100 meetings × 8: chat send → all members p99',
    100,
    ' ms',
  ),
  atLeast(
    'scale_fanout_2000_ratio_vs_bare',
    'Fan-out to 2,000 sockets: ours / bare ws (scale)',
    0.8,
  ),
  atMost(
    'join_to_first_audio_p99_ms',
    'Meeting join in Chromium: REST join → first audio of the host, p99 of 20',
    1_000,
    ' ms',
  ),
  atMost(
    'network_switch_recovery_ms',
    'A page’s network switch → the host’s audio again, median',
    5_000,
    ' ms',
  ),
  atMost(
    'node_death_recovery_ms',
    'A page’s node killed behind a balancer → the host’s audio again, median',
    5_000,
    ' ms',
  ),
  atMost(
    'simulcast_grid_downstream_ratio',
    'Meeting viewer of a 9-tile grid, downstream: simulcast / one layer',
    0.4,
  ),
  // bench:big-room: one room's audience over origin and edge routers.
  atLeast('big_room_piped_cost_ratio', 'Big room: CPU per consumer, origin / piped edge', 0.9),
  atMost('big_room_pipe_hop_p99_ms', 'Big room: pipe hop, edge − origin arrival p99', 5, ' ms'),
  atLeast('big_room_dtx_gain', 'Big room: listeners, 2 of 8 talking / all talking', 3),
  atMost(
    'big_room_audience_seat_p99_ratio',
    'Big room: seat command p99, 10,000 present / 100',
    1.5,
  ),
  // bench:scale, connections: 10,000 sockets on one node, 1–3 rooms each.
  atMost(
    'scale_connections_10000_kib_per_connection',
    '10,000 sockets: memory per idle connection',
    20,
    ' KiB',
  ),
  atMost(
    'scale_connections_10000_connect_storm_max_stall_ms',
    '10,000 sockets connecting at 2,000/s: longest event-loop stall (median of 3 storms)',
    50,
    ' ms',
  ),
  atMost(
    'scale_connections_10000_connect_storm_worst_stall_ms',
    '10,000 sockets connecting at 2,000/s: longest event-loop stall (worst storm)',
    50,
    ' ms',
  ),
  // bench:scale, rooms: memory bounded by idle unload (flat once at its ceiling).
  atMost(
    'scale_rooms_100000_heap_end_over_halfway',
    '100,000 rooms touched: live heap at the end / halfway',
    1.1,
  ),
  // bench:scale, sweeper: the due-alarm query reads its index (a scan takes about a second).
  atMost(
    'scale_sweeper_1000000_sweep_query_ms',
    'Sweeper query, 1,000,000 room_cells rows (MariaDB median)',
    5,
    ' ms',
  ),
];

export interface GoalResult {
  readonly key: string;
  readonly label: string;
  readonly goal: string;
  readonly value: number | null;
  readonly met: 'yes' | 'no' | '–';
}

export function goalsFor(figures: Figures): GoalResult[] {
  return GOALS.map((g) => {
    const value = figures[g.key];
    const measured = value !== undefined && Number.isFinite(value);
    return {
      key: g.key,
      label: g.label,
      goal: g.goal,
      value: measured ? value : null,
      met: measured ? (g.met(value) ? 'yes' : 'no') : '–',
    };
  });
}
