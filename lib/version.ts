/** Outpost's version, stamped at build time; the Kubernetes version its API mimics for kubectl. */
export const OUTPOST_VERSION = '0.1.0';
export const KUBE_MINOR = '32';

/** The `/version` answer: kubectl's dispatcher picks its client by `minor`. */
export const versionInfo = () => ({
  major: '1',
  minor: KUBE_MINOR,
  gitVersion: `v1.${KUBE_MINOR}.0-outpost.${OUTPOST_VERSION}`,
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '',
  goVersion: `node${process.versions.node}`,
  compiler: 'outpost',
  platform: `${process.platform}/${process.arch}`,
});
