/**
 * Test-only: a client host behind NAT and a firewall, made of this machine's network
 * namespaces (iproute2, iptables), with every address inside the namespaces and the host's
 * end of one veth pair:
 *
 *   host (server, 198.18.N.1) ── veth ── router (198.18.N.2; NAT) ── veth ── client (198.19.N.2)
 *
 * The router masquerades the client's traffic, so the server sees it come from 198.18.N.2.
 * With `firewall` (the default) the client drops everything it sends but TCP to the server's
 * `allowTcp` ports (and what answers it): no UDP at all, no TCP to the media ports. The
 * client also has a second link to the router (198.20.N.2), down until `switchLink()` moves
 * its traffic there, as a phone leaving Wi-Fi for its mobile network. What runs in the client
 * runs through `ip netns exec` (`wrap`). Needs root; `close()` removes it all.
 */
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface HardNetwork {
  /** The server's address, on the host: what the client reaches it at. */
  readonly serverIp: string;
  /** The router's upstream address: where the client's NATed traffic comes from. */
  readonly natIp: string;
  /** Allows the client TCP to these ports of the server. */
  allowTcp(ports: readonly number[]): void;
  /**
   * Takes the client's current link down and routes it over the other (the second, then the
   * first again, …): a new address and a new path, as a phone leaving Wi-Fi for its mobile
   * network.
   */
  switchLink(): void;
  /** An executable that runs `program` with its arguments inside the client namespace. */
  wrap(program: string): string;
  close(): void;
}

/** Why these tests cannot run here (false: they can); never skipped in CI. */
export function hardNetworkSkipReason(): string | false {
  const missing = ['ip', 'iptables', 'turnserver'].filter((cmd) => !commandExists(cmd));
  const hint =
    process.getuid?.() !== 0
      ? 'needs root (network namespaces)'
      : missing.length > 0
        ? `missing ${missing.join(', ')} (apt-get install iproute2 iptables coturn)`
        : false;
  if (hint && process.env.CI === 'true') {
    throw new Error(`the hard-network test must not skip in CI: ${hint}`);
  }
  return hint;
}

function commandExists(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' });

export function hardNetwork(options: { firewall?: boolean } = {}): HardNetwork {
  const n = randomInt(1, 250);
  const id = `${process.pid % 10_000}${n}`;
  const router = `echo-r-${id}`;
  const client = `echo-c-${id}`;
  // Interface names: at most 15 characters.
  const [hostEnd, routerUp, routerDown, clientEnd, routerDown2, clientEnd2] = [
    'h',
    'u',
    'd',
    'c',
    'e',
    'f',
  ].map((end) => `ec${end}${id}`) as [string, string, string, string, string, string];
  const serverIp = `198.18.${n}.1`;
  const natIp = `198.18.${n}.2`;
  const dir = mkdtempSync(path.join(tmpdir(), 'hard-network-'));
  const inRouter = (...args: string[]) => run('ip', 'netns', 'exec', router, ...args);
  const inClient = (...args: string[]) => run('ip', 'netns', 'exec', client, ...args);
  const close = () => {
    for (const ns of [client, router]) {
      try {
        run('ip', 'netns', 'del', ns);
      } catch {
        // not made
      }
    }
    try {
      run('ip', 'link', 'del', hostEnd);
    } catch {
      // gone with the router's namespace
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run('ip', 'netns', 'add', router);
    run('ip', 'netns', 'add', client);
    run('ip', 'link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', routerUp);
    run('ip', 'link', 'set', routerUp, 'netns', router);
    run('ip', 'addr', 'add', `${serverIp}/30`, 'dev', hostEnd);
    run('ip', 'link', 'set', hostEnd, 'up');
    inRouter('ip', 'link', 'add', routerDown, 'type', 'veth', 'peer', 'name', clientEnd);
    inRouter('ip', 'link', 'set', clientEnd, 'netns', client);
    inRouter('ip', 'addr', 'add', `${natIp}/30`, 'dev', routerUp);
    inRouter('ip', 'addr', 'add', `198.19.${n}.1/24`, 'dev', routerDown);
    for (const dev of ['lo', routerUp, routerDown]) inRouter('ip', 'link', 'set', dev, 'up');
    inRouter('sysctl', '-qw', 'net.ipv4.ip_forward=1');
    inRouter('iptables', '-t', 'nat', '-A', 'POSTROUTING', '-o', routerUp, '-j', 'MASQUERADE');
    inClient('ip', 'addr', 'add', `198.19.${n}.2/24`, 'dev', clientEnd);
    for (const dev of ['lo', clientEnd]) inClient('ip', 'link', 'set', dev, 'up');
    inClient('ip', 'route', 'add', 'default', 'via', `198.19.${n}.1`);
    // The second link, up on both ends, without an address until switchLink() moves there.
    inRouter('ip', 'link', 'add', routerDown2, 'type', 'veth', 'peer', 'name', clientEnd2);
    inRouter('ip', 'link', 'set', clientEnd2, 'netns', client);
    inRouter('ip', 'addr', 'add', `198.20.${n}.1/24`, 'dev', routerDown2);
    inRouter('ip', 'link', 'set', routerDown2, 'up');
    inClient('ip', 'link', 'set', clientEnd2, 'up');
    if (options.firewall ?? true) {
      // The firewall: loopback and answers pass; new traffic only as allowTcp says.
      inClient('iptables', '-A', 'OUTPUT', '-o', 'lo', '-j', 'ACCEPT');
      inClient(
        'iptables',
        '-A',
        'OUTPUT',
        '-m',
        'state',
        '--state',
        'ESTABLISHED,RELATED',
        '-j',
        'ACCEPT',
      );
      inClient('iptables', '-P', 'OUTPUT', 'DROP');
    }
  } catch (error) {
    close();
    throw error;
  }
  let onSecond = false;
  return {
    serverIp,
    natIp,
    allowTcp(ports) {
      for (const port of ports) {
        inClient(
          'iptables',
          '-I',
          'OUTPUT',
          '-p',
          'tcp',
          '-d',
          serverIp,
          '--dport',
          String(port),
          '-j',
          'ACCEPT',
        );
      }
    },
    switchLink() {
      const links = [
        { dev: clientEnd, address: `198.19.${n}.2/24`, via: `198.19.${n}.1` },
        { dev: clientEnd2, address: `198.20.${n}.2/24`, via: `198.20.${n}.1` },
      ];
      const [from, to] = onSecond ? [links[1]!, links[0]!] : [links[0]!, links[1]!];
      onSecond = !onSecond;
      // The old address goes with the old network: what was bound to it is cut off.
      inClient('ip', 'addr', 'flush', 'dev', from.dev);
      inClient('ip', 'link', 'set', from.dev, 'down');
      inClient('ip', 'link', 'set', to.dev, 'up');
      inClient('ip', 'addr', 'add', to.address, 'dev', to.dev);
      inClient('ip', 'route', 'replace', 'default', 'via', to.via, 'dev', to.dev);
    },
    wrap(program) {
      const file = path.join(dir, `${path.basename(program)}-in-${client}`);
      writeFileSync(file, `#!/bin/sh\nexec ip netns exec ${client} ${program} "$@"\n`);
      chmodSync(file, 0o755);
      return file;
    },
    close,
  };
}
