// The images preloaded into every node, tagged exactly as kubeadm and the manifests name them: one
// static binary each for the control plane, etcd, CoreDNS and pause; a Debian userland (iptables,
// iproute2, kubectl) under kube-proxy, the pod network and the storage provisioner.
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import type { DockerCli } from "./docker-cli.js";
import type { NodeImageBinaries } from "./go-parts.js";
import { imageRefs, type NodeImageVersions } from "./recipe.js";

const PATH_ENV = "ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

function binary(binaries: NodeImageBinaries, name: string): string {
  const path = binaries[name];
  if (path === undefined) throw new RekindleError("BUILD_FAILED", `no ${name} binary was built`);
  return path;
}

/** An image of one static binary plus the few files programs expect (/etc/passwd, /tmp). */
export async function staticImage(
  docker: DockerCli,
  workDir: string,
  ref: string,
  program: string,
): Promise<void> {
  const dir = mkdtempSync(join(workDir, "image-"));
  try {
    const name = program.split("/").pop() ?? program;
    mkdirSync(join(dir, "usr", "local", "bin"), { recursive: true });
    mkdirSync(join(dir, "etc"));
    mkdirSync(join(dir, "tmp"));
    chmodSync(join(dir, "tmp"), 0o1777);
    copyFileSync(program, join(dir, "usr", "local", "bin", name));
    chmodSync(join(dir, "usr", "local", "bin", name), 0o755);
    writeFileSync(
      join(dir, "etc", "passwd"),
      "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n",
    );
    writeFileSync(join(dir, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n");
    await docker.importDirectory(dir, ref, [`ENTRYPOINT ["/usr/local/bin/${name}"]`, PATH_ENV]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tags every preloaded image in the engine and returns their references. */
export async function buildComponentImages(options: {
  docker: DockerCli;
  workDir: string;
  userlandTar: string;
  binaries: NodeImageBinaries;
  versions: NodeImageVersions;
}): Promise<string[]> {
  const { docker, workDir, binaries } = options;
  const refs = imageRefs(options.versions);
  await staticImage(docker, workDir, refs.apiserver, binary(binaries, "kube-apiserver"));
  await staticImage(docker, workDir, refs.controllerManager, binary(binaries, "kube-controller-manager"));
  await staticImage(docker, workDir, refs.scheduler, binary(binaries, "kube-scheduler"));
  await staticImage(docker, workDir, refs.etcd, binary(binaries, "etcd"));
  await staticImage(docker, workDir, refs.coredns, binary(binaries, "coredns"));
  await staticImage(docker, workDir, refs.pause, binary(binaries, "pause"));

  const userlandBase = `${refs.userland}-base`;
  await docker.importTar(options.userlandTar, userlandBase);
  await docker.commitWithFiles(userlandBase, refs.userland, [
    { from: binary(binaries, "kubectl"), to: "/usr/local/bin/kubectl" },
  ]);
  await docker.commitWithFiles(
    refs.userland,
    refs.proxy,
    [{ from: binary(binaries, "kube-proxy"), to: "/usr/local/bin/kube-proxy" }],
    ['ENTRYPOINT ["/usr/local/bin/kube-proxy"]'],
  );
  await docker.commitWithFiles(
    refs.userland,
    refs.localPath,
    [{ from: binary(binaries, "local-path-provisioner"), to: "/usr/local/bin/local-path-provisioner" }],
    ['ENTRYPOINT ["/usr/local/bin/local-path-provisioner"]'],
  );
  await docker.removeImages([userlandBase]);
  return Object.values(refs);
}
