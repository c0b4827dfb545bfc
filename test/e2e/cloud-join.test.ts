// `outpost join` against a real cluster: a bootstrap token made with kubectl as the README shows,
// discovery verified by the token's signature and the pinned CA hash, a CSR the cluster approves
// and signs, the credentials in DATA_DIR/pki (0600), then `serve --cloud` with them: node Ready.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '#lib/clock.ts';
import { caCertHash } from '#lib/cloud/bootstrap/discovery.ts';
import { join } from '#lib/cloud/bootstrap/join.ts';
import { silentLogger } from '#lib/log.ts';
import { startTestAgent, type TestAgent } from '../helpers/agent.ts';
import { cloudLabOrSkip } from '../helpers/cloud.ts';
import { waitFor } from '../helpers/lab.ts';

const lab = await cloudLabOrSkip('cloud-join');
if (lab) {
  const node = 'edge-join-1';
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'outpost-join-'));
  const token = { id: 'outpst', secret: '0123456789abcdef' };
  const hash = caCertHash(readFileSync(lab.caFile));
  let agent: TestAgent | undefined;

  test.after(async () => {
    await agent?.stop();
    await lab.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a bootstrap token with a wrong CA pin is refused before anything is sent', async () => {
    await lab.kubectl([
      '-n',
      'kube-system',
      'create',
      'secret',
      'generic',
      `bootstrap-token-${token.id}`,
      '--type',
      'bootstrap.kubernetes.io/token',
      '--from-literal',
      `token-id=${token.id}`,
      '--from-literal',
      `token-secret=${token.secret}`,
      '--from-literal',
      'usage-bootstrap-authentication=true',
      '--from-literal',
      'usage-bootstrap-signing=true',
    ]);
    const wrong = `sha256:${'0'.repeat(64)}`;
    const err = await join({
      nodeName: node,
      dataDir,
      server: lab.proxy.url,
      token: `${token.id}.${token.secret}`,
      caCertHashes: [wrong],
      clock: systemClock,
      log: silentLogger,
    }).catch((e: Error) => e);
    assert.instance(err, Error);
    assert.match((err as Error).message, /matches none of --ca-cert-hash/);
  });

  test('join: CSR approved and signed, credentials in DATA_DIR/pki with mode 0600', async () => {
    const kubeconfig = await join({
      nodeName: node,
      dataDir,
      server: lab.proxy.url,
      token: `${token.id}.${token.secret}`,
      caCertHashes: [hash],
      clock: systemClock,
      log: silentLogger,
      timeoutMs: 120_000,
    });
    assert.is(kubeconfig, joinPath(dataDir, 'pki/kubeconfig'));
    const pem = joinPath(dataDir, 'pki/node-client-current.pem');
    assert.is(statSync(pem).mode & 0o777, 0o600);
    assert.is(statSync(kubeconfig).mode & 0o777, 0o600);
    const cert = new X509Certificate(readFileSync(pem));
    assert.match(cert.subject, new RegExp(`CN=system:node:${node}`));
    assert.ok(cert.checkIssued(new X509Certificate(readFileSync(lab.caFile))));
    const csrs = JSON.parse(await lab.kubectl(['get', 'csr', '-o', 'json'])).items as {
      spec: { signerName: string; username: string };
      status: { conditions?: { type: string }[] };
    }[];
    const ours = csrs.filter((c) => c.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet');
    assert.ok(
      ours.some((c) => c.status.conditions?.some((x) => x.type === 'Approved')),
      'no approved CSR',
    );
    assert.ok(ours.some((c) => c.spec.username === `system:bootstrap:${token.id}`));
  });

  test('serve --cloud with the joined credentials: the node is Ready', async () => {
    agent = await startTestAgent({ nodeName: node, flags: { cloud: joinPath(dataDir, 'pki/kubeconfig') } });
    const ready = await waitFor(
      async () =>
        (await lab
          .kubectl(['get', 'node', node, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
          .catch(() => '')) === 'True',
      60_000,
      500,
    );
    assert.ok(ready, 'node not Ready');
  });

  test.run();
}
