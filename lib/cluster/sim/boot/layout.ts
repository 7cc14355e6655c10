// Where a sim cluster keeps its files: one directory per cluster, logs kept after teardown.
import { join, resolve } from "node:path";

export interface SimLayout {
  root: string;
  stateFile: string;
  /** The admin kubeconfig handed to users and tests. */
  kubeconfig: string;
  logsDir: string;
  etcdDataDir: string;
  pkiDir: string;
  apiserverCertDir: string;
  /** Written by kube-apiserver at first start: its serving cert followed by the CA that signed it. */
  apiserverCertificate: string;
  /** The key of apiserverCertificate (the clock-skew webhook serves with the same pair on 127.0.0.1). */
  apiserverKey: string;
  tokenFile: string;
  serviceAccountPrivateKey: string;
  serviceAccountPublicKey: string;
  kwokDir: string;
  componentKubeconfig(component: string): string;
}

/**
 * `root` may be relative (a relative --report-dir holds the run's cluster); every path is made
 * absolute, since the kubeconfigs name their certificates by path and a client resolves a relative
 * one from the kubeconfig's own directory, not from ours.
 */
export function simLayout(relativeOrAbsoluteRoot: string): SimLayout {
  const root = resolve(relativeOrAbsoluteRoot);
  const pkiDir = join(root, "pki");
  const apiserverCertDir = join(pkiDir, "apiserver");
  return {
    root,
    stateFile: join(root, "state.json"),
    kubeconfig: join(root, "kubeconfig"),
    logsDir: join(root, "logs"),
    etcdDataDir: join(root, "etcd-data"),
    pkiDir,
    apiserverCertDir,
    apiserverCertificate: join(apiserverCertDir, "apiserver.crt"),
    apiserverKey: join(apiserverCertDir, "apiserver.key"),
    tokenFile: join(pkiDir, "tokens.csv"),
    serviceAccountPrivateKey: join(pkiDir, "sa.key"),
    serviceAccountPublicKey: join(pkiDir, "sa.pub"),
    kwokDir: join(root, "kwok"),
    componentKubeconfig: (component) => join(pkiDir, `${component}.kubeconfig`),
  };
}
