/**
 * Test-only: stand-ins for the images `deploy/compose.yaml` names besides the project's own
 * (`mariadb:10.11`, `redis:7`, `coturn/coturn:4.6`), where no registry can be reached. Each is
 * built on the {@link BASE_IMAGE} stand-in (a Debian bookworm root) from Debian's own package
 * of the same server, and honours what the compose file uses of the official image: MariaDB's
 * `MARIADB_ROOT_PASSWORD` / `MARIADB_DATABASE` on an empty data directory, options given as
 * the command (`--port=…`) and its `healthcheck.sh`; `redis-server` and `redis-cli`, and
 * `turnserver`, on the PATH.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BASE_IMAGE, hasImage, type DockerDaemon } from './docker-daemon.js';

/** Debian's packages install without starting services (no init in an image build). */
const APT = (packages: string) =>
  [
    "printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d",
    'apt-get update',
    `DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages}`,
    'rm -rf /var/lib/apt/lists/*',
  ].join(' && ');

/** The official image's first start: the root password and the database, then the server. */
const MARIADB_ENTRYPOINT = `#!/bin/sh
set -e
# Options alone are the server's (as the official image takes them).
if [ "\${1#-}" != "$1" ]; then set -- mariadbd "$@"; fi
if [ "$1" = mariadbd ] && [ ! -d /var/lib/mysql/mysql ]; then
  chown -R mysql:mysql /var/lib/mysql /run/mysqld
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db >/dev/null
  mariadbd --user=mysql --skip-networking --socket=/run/mysqld/init.sock &
  pid=$!
  until mariadb-admin --socket=/run/mysqld/init.sock ping >/dev/null 2>&1; do sleep 0.2; done
  mariadb --socket=/run/mysqld/init.sock -uroot <<SQL
CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '\${MARIADB_ROOT_PASSWORD}';
GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
ALTER USER 'root'@'localhost' IDENTIFIED BY '\${MARIADB_ROOT_PASSWORD}';
CREATE DATABASE IF NOT EXISTS \\\`\${MARIADB_DATABASE:-test}\\\`;
SQL
  kill "$pid"
  wait "$pid" || true
fi
if [ "$1" = mariadbd ]; then shift; set -- mariadbd --user=mysql "$@"; fi
exec "$@"
`;

/** Healthy once the server answers on its socket with the root password. */
const MARIADB_HEALTHCHECK = `#!/bin/sh
exec mariadb -uroot -p"$MARIADB_ROOT_PASSWORD" --socket=/run/mysqld/mysqld.sock -e 'SELECT 1' >/dev/null
`;

const STAND_INS: Record<string, { dockerfile: string; files?: Record<string, string> }> = {
  'mariadb:10.11': {
    dockerfile: [
      `FROM ${BASE_IMAGE}`,
      `RUN ${APT('mariadb-server mariadb-client')} && rm -rf /var/lib/mysql && mkdir -p /var/lib/mysql /run/mysqld && chown mysql:mysql /var/lib/mysql /run/mysqld`,
      'COPY docker-entrypoint.sh healthcheck.sh /usr/local/bin/',
      'RUN chmod +x /usr/local/bin/docker-entrypoint.sh /usr/local/bin/healthcheck.sh',
      'VOLUME /var/lib/mysql',
      'ENTRYPOINT ["docker-entrypoint.sh"]',
      'CMD ["mariadbd"]',
    ].join('\n'),
    files: { 'docker-entrypoint.sh': MARIADB_ENTRYPOINT, 'healthcheck.sh': MARIADB_HEALTHCHECK },
  },
  'redis:7': {
    dockerfile: [
      `FROM ${BASE_IMAGE}`,
      `RUN ${APT('redis-server redis-tools')}`,
      'CMD ["redis-server"]',
    ].join('\n'),
  },
  'coturn/coturn:4.6': {
    dockerfile: [`FROM ${BASE_IMAGE}`, `RUN ${APT('coturn')}`, 'ENTRYPOINT ["turnserver"]'].join(
      '\n',
    ),
  },
};

/** Builds each stand-in the daemon lacks (minutes the first time; kept after). */
export function ensureComposeStandIns(daemon: DockerDaemon): void {
  for (const [tag, { dockerfile, files = {} }] of Object.entries(STAND_INS)) {
    if (hasImage(daemon, tag)) continue;
    const context = mkdtempSync(path.join(tmpdir(), 'echochat-stand-in-'));
    try {
      writeFileSync(path.join(context, 'Dockerfile'), dockerfile);
      for (const [name, text] of Object.entries(files))
        writeFileSync(path.join(context, name), text);
      daemon.docker(['build', '--network', 'host', '-t', tag, context], { timeoutMs: 900_000 });
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
  }
}
