/**
 * Test helper: a throw-away certificate authority and certificates it signs (EC P-256, one day,
 * for 127.0.0.1 and localhost, usable as server and as client certificate), made with the
 * `openssl` command line in a temporary directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCert {
  /** PEM contents. */
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Paths of the same files (for ROOMS_*_TLS_* variables). */
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TestCa {
  readonly ca: Buffer;
  readonly caFile: string;
  /** A certificate signed by this CA. */
  issue(name: string): TestCert;
  /** Deletes the directory. */
  remove(): void;
}

const NEW_KEY = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';

export function createTestCa(label = 'test'): TestCa {
  const dir = mkdtempSync(join(tmpdir(), `rooms-certs-${label}-`));
  const file = (name: string) => join(dir, name);
  // Arguments split on spaces: the temporary paths contain none.
  const openssl = (args: string) => execFileSync('openssl', args.split(' '), { stdio: 'pipe' });
  openssl(
    `req -x509 ${NEW_KEY} -days 1 -subj /CN=${label}-ca -addext basicConstraints=critical,CA:TRUE ` +
      `-addext keyUsage=critical,keyCertSign,cRLSign -keyout ${file('ca.key')} -out ${file('ca.pem')}`,
  );
  writeFileSync(
    file('leaf.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  return {
    ca: readFileSync(file('ca.pem')),
    caFile: file('ca.pem'),
    issue(name) {
      const [keyFile, csr, certFile] = [`${name}.key`, `${name}.csr`, `${name}.pem`].map(file) as [
        string,
        string,
        string,
      ];
      openssl(`req -new ${NEW_KEY} -subj /CN=${name} -keyout ${keyFile} -out ${csr}`);
      openssl(
        `x509 -req -in ${csr} -CA ${file('ca.pem')} -CAkey ${file('ca.key')} -CAcreateserial ` +
          `-days 1 -extfile ${file('leaf.ext')} -out ${certFile}`,
      );
      return { cert: readFileSync(certFile), key: readFileSync(keyFile), certFile, keyFile };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
