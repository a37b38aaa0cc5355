import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate authority made for one test: its files, and certificates it signs. */
export interface TestCa {
  /** The CA certificate, PEM, as a file (what a site's tls.caFile names). */
  certFile: string;
  cert: string;
  /** A certificate for a server's names, or for a client (`client: true`): PEM files and texts. */
  issue(name: string, options?: { hosts?: string[]; client?: boolean }): Issued;
}

interface Issued {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * Makes a throwaway CA in `dir` with the openssl CLI (EC P-256 keys: quick to make), named `name`. Nothing is
 * trusted by the system: a test trusts it on purpose (a site's caFile, NODE_EXTRA_CA_CERTS) or shows it is not.
 */
export function makeTestCa(dir: string, name: string): TestCa {
  const certFile = join(dir, `${name}-ca.pem`);
  const keyFile = join(dir, `${name}-ca-key.pem`);
  openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', keyFile]);
  openssl(dir, ['req', '-x509', '-new', '-key', keyFile, '-sha256', '-days', '2', '-subj', `/CN=${name} test CA`, '-out', certFile]);
  let serial = 0;
  return {
    certFile,
    cert: readFileSync(certFile, 'utf8'),
    issue(subject, options = {}) {
      const base = join(dir, `${name}-${++serial}`);
      const issued = { certFile: `${base}.pem`, keyFile: `${base}-key.pem` };
      openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${base}-key-sec1.pem`]);
      // PKCS#8 ("BEGIN PRIVATE KEY"), as most tools write keys today.
      openssl(dir, ['pkcs8', '-topk8', '-nocrypt', '-in', `${base}-key-sec1.pem`, '-out', issued.keyFile]);
      openssl(dir, ['req', '-new', '-key', issued.keyFile, '-subj', `/CN=${subject}`, '-out', `${base}.csr`]);
      const ext = options.client
        ? 'extendedKeyUsage=clientAuth\n'
        : `extendedKeyUsage=serverAuth\nsubjectAltName=${(options.hosts ?? [subject]).map((h) => (/^[\d.]+$/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',')}\n`;
      writeFileSync(`${base}.ext`, `basicConstraints=CA:FALSE\n${ext}`);
      openssl(dir, [
        'x509',
        '-req',
        '-in',
        `${base}.csr`,
        '-CA',
        certFile,
        '-CAkey',
        keyFile,
        '-set_serial',
        String(1000 + serial),
        '-days',
        '2',
        '-sha256',
        '-extfile',
        `${base}.ext`,
        '-out',
        issued.certFile,
      ]);
      return { ...issued, cert: readFileSync(issued.certFile, 'utf8'), key: readFileSync(issued.keyFile, 'utf8') };
    },
  };
}
