// The lab's certificates, made with openssl: one CA (also the controller manager's CSR signer, so
// node certificates from TLS bootstrapping are trusted by the API server), the API server's serving
// certificate for 127.0.0.1/localhost, client certificates, and the service-account key pair.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Creates ca.{crt,key}, apiserver.{crt,key} and sa.{key,pub} in `dir` unless present. */
export function makeClusterPki(dir: string): void {
  if (!existsSync(join(dir, 'ca.crt'))) {
    openssl(
      [
        'req',
        '-x509',
        ...EC,
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-subj',
        '/CN=outpost-lab-ca',
        '-days',
        '3650',
      ],
      dir,
    );
  }
  if (!existsSync(join(dir, 'apiserver.crt'))) {
    issue(dir, 'apiserver', '/CN=kube-apiserver', 'serverAuth', 'IP:127.0.0.1,DNS:localhost');
  }
  if (!existsSync(join(dir, 'sa.key'))) {
    openssl(['genrsa', '-out', 'sa.key', '2048'], dir);
    openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  }
}

/** A certificate `name.crt`/`name.key` signed by the lab CA; clients get `clientAuth`. */
export function issue(dir: string, name: string, subject: string, usage = 'clientAuth', san?: string): void {
  openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
  const ext = [`extendedKeyUsage=${usage}`, 'keyUsage=critical,digitalSignature,keyEncipherment'];
  if (san) ext.push(`subjectAltName=${san}`);
  writeFileSync(join(dir, `${name}.ext`), `${ext.join('\n')}\n`);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '365',
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
}

const b64 = (file: string) => readFileSync(file).toString('base64');

/** A kubeconfig for `server` with the lab CA and the client certificate `name` from `dir`. */
export function clientKubeconfig(dir: string, server: string, user: string, name: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: ${server}
    certificate-authority-data: ${b64(join(dir, 'ca.crt'))}
users:
- name: ${user}
  user:
    client-certificate-data: ${b64(join(dir, `${name}.crt`))}
    client-key-data: ${b64(join(dir, `${name}.key`))}
contexts:
- name: ${user}@lab
  context:
    cluster: lab
    user: ${user}
current-context: ${user}@lab
`;
}
