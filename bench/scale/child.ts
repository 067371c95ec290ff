/**
 * A bench child process driven over IPC: each request is a message with a `type`, each
 * answer a message of the same `type`. Dimensions run their node and their clients in
 * children so that memory, CPU and the event loop measured are one side's alone.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface BenchChild {
  readonly process: ChildProcess;
  /** Sends `{type, ...fields}`; resolves with the child's next message of that type. */
  ask<T extends object>(type: string, fields?: object, timeoutMs?: number): Promise<T>;
  /** `exit`, then SIGKILL if it is still there after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Forks bench/scale/<file> under tsx with `env` added to this process's environment (the
 * parent's ROOMS_* variables left out) and waits for its `ready` message.
 */
export async function startChild(
  file: string,
  env: Record<string, string> = {},
  execArgv: string[] = [],
): Promise<{ child: BenchChild; ready: Record<string, unknown> }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('ROOMS_')),
  );
  const child = fork(path.join(HERE, file), [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...inherited, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = <T>(type: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${file}: no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (m: { type?: string }) => {
        if (m.type !== type) return;
        cleanup();
        resolve(m as T);
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`${file} exited (${code}) before its ${type}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = await next<Record<string, unknown>>('ready', 60_000);
  return {
    ready,
    child: {
      process: child,
      ask: (type, fields = {}, timeoutMs = 600_000) => {
        const answer = next<never>(type, timeoutMs);
        child.send({ type, ...fields });
        return answer;
      },
      async close(graceMs = 10_000) {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.send({ type: 'exit' });
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      },
    },
  };
}
