/**
 * Test-only: a Docker daemon of the test's own (Debian's docker.io), and a stand-in for the
 * `node:20-bookworm-slim` base image where no registry can be reached.
 *
 * The daemon makes no bridge and touches no iptables (`--bridge=none`): containers run with
 * `--network host` only, so nothing is ever sent to a private-range address. Its images live
 * in /var/lib/echochat-docker, kept between runs so that the project's image is rebuilt from
 * its cached layers (the mediasoup worker's build takes minutes once).
 *
 * The stand-in is what the official image holds, made here: a Debian bookworm root file
 * system (`debootstrap --variant=minbase`), this machine's Node.js 20 and npm under
 * /usr/local, Node's headers (native modules build offline), the `node` user (uid 1000),
 * and this machine's extra CA certificates (its egress to the registries goes through them).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const DATA_ROOT = '/var/lib/echochat-docker';
export const BASE_IMAGE = 'node:20-bookworm-slim';

export interface DockerDaemon {
  /** Runs the docker client against this daemon; its stdout. */
  docker(args: readonly string[], options?: { input?: Buffer; timeoutMs?: number }): string;
  readonly host: string;
  stop(): Promise<void>;
}

/** Why the Docker tests cannot run here (false: they can); never skipped in CI. */
export function dockerSkipReason(): string | false {
  const missing = ['dockerd', 'docker', 'debootstrap', 'docker-compose'].filter((cmd) => {
    try {
      execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  const hint =
    process.getuid?.() !== 0
      ? 'needs root (a Docker daemon of its own)'
      : missing.length > 0
        ? `missing ${missing.join(', ')} (apt-get install docker.io docker-compose debootstrap)`
        : false;
  if (hint && process.env.CI === 'true') {
    throw new Error(`the Docker test must not skip in CI: ${hint}`);
  }
  return hint;
}

export async function startDockerDaemon(): Promise<DockerDaemon> {
  const run = mkdtempSync(path.join(tmpdir(), 'echochat-dockerd-'));
  const host = `unix://${path.join(run, 'docker.sock')}`;
  mkdirSync(DATA_ROOT, { recursive: true });
  const daemon: ChildProcess = spawn(
    'dockerd',
    [
      ...['--data-root', DATA_ROOT, '--exec-root', path.join(run, 'exec'), '-H', host],
      ...['--pidfile', path.join(run, 'docker.pid'), '--bridge=none', '--iptables=false'],
      '--ip6tables=false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  daemon.stderr!.on(
    'data',
    (chunk: Buffer) => (log = (log + chunk.toString('utf8')).slice(-4_000)),
  );
  const docker: DockerDaemon['docker'] = (args, options = {}) =>
    execFileSync('docker', ['-H', host, ...args], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      timeout: options.timeoutMs ?? 60_000,
      ...(options.input ? { input: options.input } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
    });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      docker(['info'], { timeoutMs: 5_000 });
      break;
    } catch {
      if (Date.now() > deadline || daemon.exitCode !== null) {
        daemon.kill('SIGKILL');
        throw new Error(`dockerd did not start: ${log}`);
      }
      await sleep(250);
    }
  }
  return {
    docker,
    host,
    async stop() {
      const exited = new Promise((resolve) => daemon.once('exit', resolve));
      daemon.kill('SIGTERM');
      await Promise.race([exited, sleep(20_000)]);
      if (daemon.exitCode === null) daemon.kill('SIGKILL');
      // dockerd leaves its network namespace's bind mount behind.
      const mounts = readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .map((line) => line.split(' ')[1] ?? '')
        .filter((target) => target.startsWith(run));
      for (const target of mounts.reverse()) {
        try {
          execFileSync('umount', ['-l', target], { stdio: 'ignore' });
        } catch {
          // already gone
        }
      }
      rmSync(run, { recursive: true, force: true });
    },
  };
}

/** Whether the daemon holds an image of that tag. */
export function hasImage(daemon: DockerDaemon, tag: string): boolean {
  try {
    daemon.docker(['image', 'inspect', tag]);
    return true;
  } catch {
    return false;
  }
}

/** Makes the {@link BASE_IMAGE} stand-in unless the daemon has it (about a minute). */
export function ensureBaseImage(daemon: DockerDaemon): void {
  if (hasImage(daemon, BASE_IMAGE)) return;
  const root = mkdtempSync(path.join(tmpdir(), 'echochat-rootfs-'));
  try {
    execFileSync(
      'debootstrap',
      ['--variant=minbase', 'bookworm', root, 'http://deb.debian.org/debian'],
      {
        stdio: 'pipe',
        timeout: 600_000,
      },
    );
    const local = (...parts: string[]) => path.join(root, 'usr', 'local', ...parts);
    for (const dir of ['bin', 'lib/node_modules', 'include', 'share/ca-certificates']) {
      mkdirSync(local(dir), { recursive: true });
    }
    copyFileSync(process.execPath, local('bin', 'node'));
    const npm = path.resolve(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
    execFileSync('cp', ['-a', npm, local('lib', 'node_modules', 'npm')]);
    execFileSync('ln', ['-s', '../lib/node_modules/npm/bin/npm-cli.js', local('bin', 'npm')]);
    execFileSync('ln', ['-s', '../lib/node_modules/npm/bin/npx-cli.js', local('bin', 'npx')]);
    const headers = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');
    execFileSync('cp', ['-a', headers, local('include', 'node')]);
    execFileSync('chroot', [root, 'useradd', '-m', '-u', '1000', '-s', '/bin/bash', 'node']);
    const cas = '/usr/local/share/ca-certificates';
    const extra = existsSync(cas) ? readdirSync(cas).filter((f) => f.endsWith('.crt')) : [];
    for (const file of extra)
      copyFileSync(path.join(cas, file), local('share', 'ca-certificates', file));
    writeFileSync(
      local('share', 'machine-ca.pem'),
      extra.map((file) => readFileSync(path.join(cas, file), 'utf8')).join('\n'),
    );
    const tar = execFileSync('tar', ['-C', root, '-c', '.'], { maxBuffer: 1024 * 1024 * 1024 });
    daemon.docker(
      [
        'import',
        ...['--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        ...['--change', 'ENV npm_config_nodedir=/usr/local'],
        ...['--change', 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/machine-ca.pem'],
        ...['--change', 'CMD ["node"]'],
        '-',
        BASE_IMAGE,
      ],
      { input: tar, timeoutMs: 300_000 },
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
