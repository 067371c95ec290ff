/**
 * Test helper: `src/main/server.ts` as a real child process, with its output captured for
 * failure reports, readiness polling and a clean stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** tsx compiles on the fly: start-up takes seconds on a small machine. */
export const READY_TIMEOUT_MS = 20_000;
/** A drained node with no cells must exit well before this. */
export const EXIT_TIMEOUT_MS = 5_000;
export const TEST_TIMEOUT_MS = 90_000;

export interface HealthBody {
  status: string;
  node_id: string;
  cells_loaded: number;
  /** Whether the node's meetings have media (see src/main/media-health.ts). */
  media?: { available: boolean; mode: string; reason?: string };
}

/** One `node --import tsx src/main/server.ts` child with its captured output. */
export class ServerProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #killOnExit = (): void => {
    this.child.kill('SIGKILL');
  };

  constructor(
    readonly label: string,
    env: Record<string, string>,
    /** The entry point, relative to the repository (a test may wrap `startNode`). */
    script = 'src/main/server.ts',
    /** Node options before the entry point (a bench's `--cpu-prof`). */
    nodeArgs: readonly string[] = [],
  ) {
    // The parent's own ROOMS_* variables (and node:test's context) must not leak in.
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !k.startsWith('ROOMS_') && k !== 'NODE_TEST_CONTEXT',
      ),
    );
    this.child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
      cwd: REPO_ROOT,
      env: { ...inherited, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    // If the test process dies first, do not leave the server behind.
    process.once('exit', this.#killOnExit);
    void this.exited.finally(() => process.off('exit', this.#killOnExit)).catch(() => undefined);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Everything the child wrote, for failure reports. */
  output(): string {
    return `--- ${this.label} (pid ${this.child.pid}) stderr ---\n${this.stderr}\n--- ${this.label} stdout ---\n${this.stdout}`;
  }

  /** Resolves with the exit, or rejects after `ms`. */
  async waitForExit(ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const timeout = sleep(ms, 'timeout' as const, { ref: false });
    const result = await Promise.race([this.exited, timeout]);
    if (result === 'timeout') throw new Error(`${this.label} did not exit within ${ms} ms`);
    return result;
  }

  /** SIGTERM, then SIGKILL if it is still alive after `graceMs`. */
  async stop(graceMs = EXIT_TIMEOUT_MS): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    try {
      await this.waitForExit(graceMs);
    } catch {
      this.child.kill('SIGKILL');
      await this.waitForExit(graceMs).catch(() => undefined);
    }
  }
}

export async function getHealth(baseUrl: string): Promise<{ status: number; body: HealthBody }> {
  const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
  return { status: res.status, body: (await res.json()) as HealthBody };
}

/** Polls /healthz until it answers 200; fails early if the process exits. */
export async function waitForHealthy(
  server: ServerProcess,
  baseUrl: string,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<HealthBody> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    if (!server.alive) {
      throw new Error(`${server.label} exited (${server.child.exitCode}) before becoming healthy`);
    }
    try {
      const { status, body } = await getHealth(baseUrl);
      if (status === 200) return body;
      last = `HTTP ${status} ${JSON.stringify(body)}`;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${server.label} not healthy within ${timeoutMs} ms: ${String(last)}`);
    }
    await sleep(150);
  }
}

/** Runs `body`; on failure prints the children's output before rethrowing. */
export async function reportingOutput(
  servers: readonly (ServerProcess | undefined)[],
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    for (const server of servers) if (server) process.stderr.write(`${server.output()}\n`);
    throw error;
  }
}
